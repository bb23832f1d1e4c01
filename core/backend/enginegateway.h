#pragma once

#include "egressgateway.h"

#include <QPointer>

class AttachStream;
class EngineClient;
class EngineReply;

// The egress gateway on one Docker engine (Docker, Podman): an internal network with no route
// out that the sandboxes join, and the gateway container on it (at a fixed address, so a
// gateway made again is where the warm sandboxes look) and on a private outbound bridge. Its
// control stream is the container's attach stream, opened before it starts. The networks stay
// until shutdown().
class EngineGateway : public EgressGateway
{
    Q_OBJECT
public:
    explicit EngineGateway(EngineClient *engine, QObject *parent = nullptr);
    ~EngineGateway() override;

protected:
    void startGateway() override;
    void removeGateway() override;
    void finishShutdown() override;
    void writeControl(const QByteArray &bytes) override;
    bool closeControl() override;
    EgressEndpoint where() const override;

private:
    // With `probe`, the engine picks the subnet; the network is then made again with it given.
    void createInternal(bool probe);
    void readSubnet();
    void createOutbound();
    void createGateway();
    void joinAndAttach();
    void startContainer();
    void waitGone(const QString &id, int checksLeft, const QString &removalError);
    // Every engine request goes through here: `onAnswer` records what the answer made (always)
    // and goes on with the start only while starting (it checks).
    void ask(EngineReply *reply, const std::function<void(EngineReply *)> &onAnswer);
    QJsonObject containerBody() const;

    EngineClient *m_engine;
    QString m_internal;
    QString m_outbound;
    QString m_subnet;  // the internal network's, fixed so that the gateway keeps its address
    QString m_address; // the gateway's on it
    QPointer<AttachStream> m_stream;
    bool m_onPodman = false; // known once the engine has said what it is
};
