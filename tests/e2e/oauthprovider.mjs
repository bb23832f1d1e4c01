// What an MCP client keeps between sign-ins (the SDK's OAuthClientProvider), for the tests that
// sign in: the test is the browser, so the authorization URL is kept, not opened.
export const REDIRECT = 'http://127.0.0.1:33418/callback';

export class OAuthProvider {
    /** `name`: what it registers as; `metadataUrl`: its client ID metadata document, if any. */
    constructor(name, metadataUrl) { this.name = name; this.metadataUrl = metadataUrl; this.saved = {}; this.authUrl = null; }
    get redirectUrl() { return REDIRECT; }
    get clientMetadataUrl() { return this.metadataUrl; }
    get clientMetadata() {
        return { client_name: this.name, redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
    }
    clientInformation() { return this.saved.client; }
    saveClientInformation(c) { this.saved.client = c; }
    tokens() { return this.saved.tokens; }
    saveTokens(t) { this.saved.tokens = t; }
    redirectToAuthorization(url) { this.authUrl = new URL(url); }
    saveCodeVerifier(v) { this.saved.verifier = v; }
    codeVerifier() { return this.saved.verifier; }
}
