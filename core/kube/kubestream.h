#pragma once

#include "kubeaccess.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QTimer>

class QWebSocket;

// One attach or exec of a pod's container over WebSocket, as kubectl speaks it
// (k8s.io/apimachinery pkg/util/httpstream/wsstream): the subprotocol v5.channel.k8s.io, else
// v4.channel.k8s.io, chosen in the handshake; every binary message starts with its channel (0
// stdin, 1 stdout, 2 stderr, 3 error: a metav1.Status at the end, 255 close: v5 only). The
// WebSocket framing is Qt's (QWebSocket); only the channel byte is ours.
//
// TLS as KubeClient has it: the access's configuration (its CA as the only root, a client
// certificate), the credential's bearer token in the handshake, and tls-server-name: QWebSocket
// 6.4 has no peer verify name of its own, so a certificate whose only fault is a name that is not
// the URL's host is taken when it names tls-server-name (every other error still fails).
// A 401 is not retried with a fresh credential here (the API calls before it already were).
class KubeStream : public QObject
{
    Q_OBJECT

public:
    enum Channel
    {
        Stdin = 0,
        Stdout = 1,
        Stderr = 2,
        Error = 3,
        Close = 255
    };

    // The handshake must be done within this.
    static constexpr int kHandshakeTimeoutMs = 30000;

    // An attach of `container` with stdin, stdout and stderr.
    static KubeStream *attach(const KubeAccess &access, const QString &pod,
                              const QString &container, QObject *parent = nullptr);
    // An exec of `command` in `container`, with stdout and stderr, and stdin when `withStdin`.
    static KubeStream *exec(const KubeAccess &access, const QString &pod, const QString &container,
                            const QStringList &command, bool withStdin, QObject *parent = nullptr);

    ~KubeStream() override;

    // The agreed subprotocol once established ("v5.channel.k8s.io"), empty before.
    QString protocol() const { return m_protocol; }
    bool isEstablished() const { return m_established; }
    // Whether stdin can be ended while the output goes on (v5 only; with v4 only the end of the
    // connection ends it).
    bool canCloseStdin() const { return m_protocol == QLatin1String("v5.channel.k8s.io"); }

    void write(const QByteArray &bytes);
    // Ends the container's stdin (v5); returns false when the protocol cannot.
    bool closeStdin();
    // Closes the connection; finished() or failed() do not follow.
    void close();

    // The Status the server sent on the error channel at the end (empty if none came).
    const QJsonObject &status() const { return m_status; }
    // The exit code the Status says: 0 for Success, the ExitCode cause for a NonZeroExitCode
    // failure, -1 when no Status came or it says something else (message()).
    int exitCode() const;
    // The Status's message, or why the stream failed.
    QString message() const;

Q_SIGNALS:
    // The upgrade went through: stdin may be written.
    void established();
    void output(int stream, const QByteArray &bytes);
    // The server closed the stream after its Status (or without one: status() is empty).
    void finished();
    // Before or after established: the connection could not be made or broke.
    void failed(const QString &error);

private:
    KubeStream(const KubeAccess &access, const QUrl &url, QObject *parent);
    void open();
    void onMessage(const QByteArray &message);
    void onDisconnected();
    void fail(const QString &error);

    KubeAccess m_access;
    QUrl m_url;
    QPointer<QWebSocket> m_socket;
    QTimer m_handshake;
    QString m_protocol;
    QJsonObject m_status;
    QString m_error;
    bool m_established = false;
    bool m_done = false;
};
