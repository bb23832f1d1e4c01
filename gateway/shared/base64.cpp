#include "base64.h"

#include <openssl/evp.h>

std::string Base64::encode(const std::string &bytes)
{
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int n =
        EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                        reinterpret_cast<const unsigned char *>(bytes.data()), int(bytes.size()));
    out.resize(size_t(n));
    return out;
}

bool Base64::decode(const std::string &text, std::string *bytes)
{
    std::string padded = text;
    while (padded.size() % 4 != 0)
        padded += '=';
    const size_t padding = padded.size() - padded.find_last_not_of('=') - 1;
    // '=' only at the end: OpenSSL would read one elsewhere as zero bits.
    if (padding > 2 || padded.size() > (1u << 24) || padded.find('=') < padded.size() - padding)
        return false;
    std::string out(padded.size() / 4 * 3, '\0');
    const int n =
        EVP_DecodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                        reinterpret_cast<const unsigned char *>(padded.data()), int(padded.size()));
    if (n < 0)
        return false;
    // EVP_DecodeBlock counts the padding's bytes as zeros.
    out.resize(size_t(n) - padding);
    *bytes = std::move(out);
    return true;
}
