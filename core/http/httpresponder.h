#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPair>

class HttpResponseSink;

// The answering side of one request, handed out by HttpServer::requestReceived. The handler
// answers through it at once or later, either whole (respond) or as a chunked stream
// (beginStream, writeChunk..., endStream).
//
// Lifetime: the responder deletes itself (deleteLater) once the response has ended or the
// connection died; in the latter case closed() is emitted first. Whoever keeps it across event
// loop turns holds a QPointer. Calls after the end are ignored. Deleting an unanswered responder
// answers 500; deleting it mid-stream drops the connection.
class HttpResponder : public QObject
{
    Q_OBJECT
public:
    using Headers = QList<QPair<QByteArray, QByteArray>>;

    ~HttpResponder() override;

    // The whole response. Content-Length, Transfer-Encoding and Connection are set here and
    // dropped from `headers`, except that "Connection: close" there closes the connection
    // after this response.
    void respond(int status, const Headers &headers, const QByteArray &body);
    // A response of unknown length, e.g. text/event-stream: chunked for HTTP/1.1 clients,
    // delimited by closing the connection for HTTP/1.0 ones.
    void beginStream(int status, const Headers &headers);
    // One chunk, written as soon as the event loop gets to it. Empty data is skipped, since an
    // empty chunk would end the stream.
    void writeChunk(const QByteArray &data);
    // The terminating chunk; the connection then serves its next request.
    void endStream();

    bool isOpen() const { return m_phase == Phase::Waiting || m_phase == Phase::Streaming; }
    bool isStreaming() const { return m_phase == Phase::Streaming; }

    // "Not Found" for 404; empty for a status nobody registered.
    static QByteArray reasonPhrase(int status);

Q_SIGNALS:
    // The client disconnected before the response ended, or the connection died.
    void closed();

private:
    friend class HttpConnection; // creates responders for the requests it receives

    enum class Phase
    {
        Waiting,
        Streaming,
        Done,
        Lost
    };

    HttpResponder(HttpResponseSink *connection, bool headRequest, bool http11, bool keepAlive,
                  QObject *parent);
    void send(int status, const Headers &headers, const QByteArray &body);
    void finish(bool keepAlive);
    QByteArray head(int status, const Headers &headers, const QByteArray &framing,
                    bool keepAlive) const;
    bool keepAliveAfter(const Headers &headers) const;
    // Called by the connection when its socket is gone.
    void connectionLost();

    HttpResponseSink *m_connection;
    Phase m_phase = Phase::Waiting;
    bool m_headRequest;
    bool m_http11;
    bool m_keepAlive;
    bool m_chunked = false;
    bool m_streamKeepAlive = false;
};
