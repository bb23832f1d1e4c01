#pragma once

#include <QString>

// Where an engine is, as the Docker CLI writes it: a local socket (unix:///path, or a bare
// absolute path), a TCP port (tcp://host:port, with or without TLS), or a host reached through
// ssh (ssh://[user@]host[:port][/socket/path], whose engine socket — the path, or
// /var/run/docker.sock — is forwarded over one ssh connection; SshTransport). A plain value:
// parsing checks the form only; whether an address may be used (plain TCP off loopback, say) is
// EngineLocator's rule.
struct EngineAddress
{
    enum class Scheme
    {
        None, // not an address (parse failed, or never set)
        Unix,
        Tcp,
        Ssh
    };

    // Docker's defaults for tcp:// without a port.
    static constexpr int kDefaultTcpPort = 2375;
    static constexpr int kDefaultTlsPort = 2376;

    Scheme scheme = Scheme::None;
    QString socketPath; // Unix: the local socket; Ssh: the socket on the remote host (may be empty)
    QString host;       // Tcp, Ssh (IPv6 without brackets)
    int port = 0;       // Tcp, Ssh; 0: the default (2375/2376 for tcp, ssh's own for ssh)
    QString user;       // Ssh; empty: ssh's own choice
    bool tls = false;   // Tcp
    QString caFile;     // Tcp+TLS: the only trust root; empty only with systemCa
    // Tcp+TLS: this machine's trust store instead of a CA of the engine's own, only when the user
    // asked for it (--tls-ca system). Without either, TLS is refused.
    bool systemCa = false;
    QString certFile; // Tcp+TLS: the client certificate (with keyFile), optional
    QString keyFile;
    QString context; // the Docker context it came from, if any
    // The container runtime its sandboxes get (HostConfig.Runtime: runsc for gVisor, say), from
    // an "?runtime=NAME" after the address; empty: the server's --runtime, else the engine's
    // default. Not part of url(): the engine is the same.
    QString runtime;

    bool isValid() const { return scheme != Scheme::None; }
    // The port a TCP connection goes to (the default filled in).
    int tcpPort() const;
    bool isLoopback() const;
    // Canonical, without secrets: unix:///p, tcp://host:port, ssh://user@host:port/p.
    QString url() const;
    // For messages and the window: the socket's path for a local engine (as it always was),
    // "tcp://127.0.0.1:2376 (TLS)" (or "(TLS, system CAs)"), "ssh://root@host:2222",
    // "context ci → tcp://…".
    QString display() const;

    bool operator==(const EngineAddress &o) const;
    bool operator!=(const EngineAddress &o) const { return !(*this == o); }

    // Any of the forms above; on failure an invalid address and `*error` says why.
    static EngineAddress parse(const QString &text, QString *error = nullptr);
    // An --engine value (an address or context:NAME) without its "?runtime=NAME" suffix, the
    // runtime in `runtime` ("" without one); a suffix that is not that sets `error`.
    static QString takeRuntime(const QString &value, QString *runtime, QString *error = nullptr);
    // Whether `name` can be a runtime's name as Docker and Podman register them.
    static bool isRuntimeName(const QString &name);
    static EngineAddress unixSocket(const QString &path);
};
