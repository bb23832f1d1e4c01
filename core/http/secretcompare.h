#pragma once

#include <QByteArray>

// Compares secrets (tokens, their digests, signatures) in time that depends on their length
// only, so that a secret cannot be found byte by byte from how fast a wrong one is refused.
class SecretCompare
{
public:
    static bool equal(const QByteArray &a, const QByteArray &b)
    {
        if (a.size() != b.size())
            return false;
        unsigned char diff = 0;
        for (qsizetype i = 0; i < a.size(); ++i)
            diff |= static_cast<unsigned char>(a[i] ^ b[i]);
        return diff == 0;
    }
};
