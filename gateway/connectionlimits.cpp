#include "connectionlimits.h"

ConnectionLimits::Admission ConnectionLimits::admit(const std::string &source)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_total >= kMaxConnections)
        return Admission::GatewayFull;
    if (!take(m_perSource, source, kMaxPerSource))
        return Admission::SourceFull;
    ++m_total;
    return Admission::Admitted;
}

void ConnectionLimits::release(const std::string &source)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    give(m_perSource, source);
    --m_total;
}

bool ConnectionLimits::admitCredential(const std::string &credential)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return take(m_perCredential, credential, kMaxPerCredential);
}

void ConnectionLimits::releaseCredential(const std::string &credential)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    give(m_perCredential, credential);
}

int ConnectionLimits::connections() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_total;
}

bool ConnectionLimits::take(std::map<std::string, int> &counts, const std::string &key, int max)
{
    int &count = counts[key];
    if (count >= max)
        return false;
    ++count;
    return true;
}

void ConnectionLimits::give(std::map<std::string, int> &counts, const std::string &key)
{
    // Entries go with their last connection: a map of every source and credential ever seen
    // would grow for as long as the gateway runs.
    const auto it = counts.find(key);
    if (it != counts.end() && --it->second <= 0)
        counts.erase(it);
}
