#pragma once

#include <QString>
#include <QStringList>

// Where an allow-list sandbox reaches its backend's egress gateway, and what it proves itself
// with: what EgressGateway answers and EgressLease hands its sandbox, whichever backend runs it.
// The renderers put it into their bodies (ContainerSpec::joinEgress, PodSpec::joinEgress) through
// the same variables (proxyEnv()).
struct EgressEndpoint
{
    QString network;   // the internal network it joins (none on Kubernetes: a policy confines)
    QString proxyHost; // the gateway's address there
    int proxyPort = 0;
    QString credential; // this sandbox's own, valid while it lives
    // NAME=value entries after the proxy variables: the secrets' placeholders, and the
    // authority's certificate for the supervisor to add to the trust store (CS_EXTRA_CA).
    QStringList env;

    // HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (both cases), npm's, NO_PROXY for loopback, then `env`.
    QStringList proxyEnv() const;

    // The name server an allow-list sandbox is given, a documentation address (RFC 5737): on a
    // network without a route out nothing answers it, so names are the gateway's to resolve.
    static constexpr const char *kNoNameServer = "192.0.2.1";
};
