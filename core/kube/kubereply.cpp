#include "kubereply.h"

void KubeReply::finish(int status, const QByteArray &body, const KubeError &error)
{
    if (m_finished)
        return;
    m_finished = true;
    m_status = status;
    m_body = body;
    m_error = error;
    Q_EMIT finished();
}
