#include "httpserver.h"

#include "httpresponder.h"
#include "mcplog.h"

#include <QMetaMethod>
#include <QTcpSocket>

HttpServer::HttpServer(QObject *parent) : QObject(parent)
{
    connect(&m_server, &QTcpServer::newConnection, this, &HttpServer::onNewConnection);
}

HttpServer::~HttpServer()
{
    // The connections are children: closing them tells pending responders (closed()) before
    // the listening socket goes.
    m_server.close();
    qDeleteAll(findChildren<HttpConnection *>(Qt::FindDirectChildrenOnly));
}

bool HttpServer::listen(const QHostAddress &address, quint16 port)
{
    if (!m_server.listen(address, port))
        return false;
    qCDebug(lcMcp) << "HTTP server listening on" << m_server.serverAddress()
                   << m_server.serverPort();
    return true;
}

quint16 HttpServer::port() const
{
    return m_server.serverPort();
}

QString HttpServer::errorString() const
{
    return m_server.errorString();
}

void HttpServer::onNewConnection()
{
    while (QTcpSocket *socket = m_server.nextPendingConnection()) {
        auto *connection = new HttpConnection(socket, m_limits, this);
        connect(connection, &HttpConnection::requestReceived, this, &HttpServer::onRequest);
    }
}

void HttpServer::onRequest(const HttpRequest &request, HttpResponder *responder)
{
    static const QMetaMethod signal = QMetaMethod::fromSignal(&HttpServer::requestReceived);
    if (!isSignalConnected(signal)) {
        responder->respond(503, {{"Content-Type", "text/plain; charset=utf-8"}},
                           "no handler for HTTP requests\n");
        return;
    }
    Q_EMIT requestReceived(request, responder);
}
