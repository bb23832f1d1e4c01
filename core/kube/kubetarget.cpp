#include "kubetarget.h"

#include <QRegularExpression>
#include <QUrl>

namespace {

const QString kScheme = QStringLiteral("k8s://");

bool fail(QString *error, const QString &message)
{
    if (error)
        *error = message;
    return false;
}

} // namespace

bool KubeTarget::isKubeUrl(const QString &text)
{
    return text.startsWith(kScheme, Qt::CaseInsensitive);
}

bool KubeTarget::isValidNamespace(const QString &name)
{
    static const QRegularExpression label(QStringLiteral("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
    return name.size() <= kMaxNamespaceLength && label.match(name).hasMatch();
}

QString KubeTarget::url() const
{
    QString u = kScheme + QString::fromUtf8(QUrl::toPercentEncoding(context, "@:._~-"));
    if (!namespace_.isEmpty())
        u += u'/' + namespace_;
    return u;
}

KubeTarget KubeTarget::parse(const QString &text, QString *error)
{
    if (error)
        error->clear();
    const QString example = QStringLiteral(" (the form is k8s://, k8s://CONTEXT or "
                                           "k8s://CONTEXT/NAMESPACE)");
    if (!isKubeUrl(text)) {
        fail(error, QStringLiteral("'%1' is not a cluster address").arg(text) + example);
        return {};
    }
    const QString rest = text.mid(kScheme.size());
    for (const QChar c : rest) {
        if (c.isSpace() || c.category() == QChar::Other_Control) {
            fail(error,
                 QStringLiteral("'%1': a cluster address holds no spaces or control characters")
                     .arg(text));
            return {};
        }
    }
    if (rest.contains(u'?') || rest.contains(u'#')) {
        fail(error, QStringLiteral("'%1': a cluster address takes no query or fragment").arg(text) +
                        example);
        return {};
    }
    const QStringList parts = rest.split(u'/');
    if (parts.size() > 2) {
        fail(error, QStringLiteral("'%1' has more than one '/': write a '/' inside the context's "
                                   "name as %2F")
                        .arg(text));
        return {};
    }
    KubeTarget t;
    const QByteArray encoded = parts.at(0).toUtf8();
    t.context = QUrl::fromPercentEncoding(encoded);
    // Bytes that are not UTF-8 decode to U+FFFD.
    if (t.context.contains(QChar::ReplacementCharacter)) {
        fail(error, QStringLiteral("'%1': the context's name is not valid UTF-8").arg(text));
        return {};
    }
    for (const QChar c : t.context) {
        if (c.category() == QChar::Other_Control) {
            fail(error,
                 QStringLiteral("'%1': the context's name holds a control character").arg(text));
            return {};
        }
    }
    if (parts.size() == 2) {
        t.namespace_ = parts.at(1);
        if (!t.namespace_.isEmpty() && !isValidNamespace(t.namespace_)) {
            fail(error, QStringLiteral("'%1': '%2' is not a namespace name (lower-case letters, "
                                       "digits and '-', at most %3, starting and ending with a "
                                       "letter or digit)")
                            .arg(text, t.namespace_)
                            .arg(kMaxNamespaceLength));
            return {};
        }
    }
    t.valid = true;
    return t;
}
