#pragma once

#include <string>
#include <string_view>

// Which addresses a name may not lead to unless the exact host is on the allow-list: the
// machine itself, the networks behind it and the cloud's metadata service. Everything else
// counts as out there, documentation ranges included (a package index may resolve into one on a
// network that rewrites names).
class AddressClass
{
public:
    // Why `address` (an IPv4 or IPv6 literal) is held back — "loopback", "private",
    // "link-local", … — or "" when a listed name may lead there; "not an address" for anything
    // else.
    static std::string restriction(std::string_view address);
};
