#pragma once

#include <map>
#include <mutex>
#include <string>

// How many connections the gateway holds at once: in all, from one source address (a sandbox on
// the internal network) and with one credential (a sandbox, wherever it connects from). Each
// connection is a thread of the gateway's, which counts against the gateway container's pids
// limit: without these caps one sandbox could take every thread there is (and crash the gateway
// when thread creation fails) or every connection slot (and starve every other sandbox).
// The global cap leaves room below the pids limit (EngineGateway: 600) for the accept and control
// threads; the per-source one leaves room for seven other busy sandboxes.
class ConnectionLimits
{
public:
    static constexpr int kMaxConnections = 512;
    static constexpr int kMaxPerSource = 64;
    static constexpr int kMaxPerCredential = 64;

    enum class Admission
    {
        Admitted,
        SourceFull,
        GatewayFull
    };

    // A new connection from `source` (its address): counted when admitted, until release().
    Admission admit(const std::string &source);
    void release(const std::string &source);
    // Its credential, once read from its head: counted when true, until releaseCredential().
    bool admitCredential(const std::string &credential);
    void releaseCredential(const std::string &credential);

    int connections() const;

private:
    static bool take(std::map<std::string, int> &counts, const std::string &key, int max);
    static void give(std::map<std::string, int> &counts, const std::string &key);

    mutable std::mutex m_mutex;
    int m_total = 0;
    std::map<std::string, int> m_perSource;
    std::map<std::string, int> m_perCredential;
};
