#pragma once

#include <string>

// Base64 as the control protocol carries bytes that are not words (a secret's value, the secrets'
// authority and trust bundle in PEM, Basic credentials) and as the gateway writes them into
// requests (Basic credentials with a secret put in). In the shared part because both ends of the
// protocol encode and decode them; libcrypto's, which both ends link anyway.
class Base64
{
public:
    static std::string encode(const std::string &bytes);
    // false for text that is not base64 (padding optional; '=' only at the end).
    static bool decode(const std::string &text, std::string *bytes);
};
