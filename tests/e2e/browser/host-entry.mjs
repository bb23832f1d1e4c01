// The host side of an MCP App in a page, made of the official host bridge
// (@modelcontextprotocol/ext-apps): viewhost/browser.test.mjs bundles this file with esbuild and
// serves it beside a page that embeds the run view as a chat client does. The MCP client itself
// stays in Node: the page reaches it through window.hostCallTool, which the test exposes.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';

// Also on window, so that the test (page.evaluate) can build another bridge from the same bundle.
window.AppBridge = AppBridge;
window.PostMessageTransport = PostMessageTransport;

const HOST_INFO = { name: 'code-sandbox-view-host', version: '1.0.0' };

// A few of the spec's theme variables, as a host passes them; the view falls back to its own
// colours for the rest.
const STYLES = {
    light: {
        '--color-background-primary': '#ffffff',
        '--color-background-secondary': '#f5f4ef',
        '--color-text-primary': '#1f1e1d',
        '--color-text-secondary': '#6b6a66',
        '--color-border-primary': '#dedcd4',
    },
    dark: {
        '--color-background-primary': '#262624',
        '--color-background-secondary': '#1f1e1d',
        '--color-text-primary': '#f5f4ef',
        '--color-text-secondary': '#b7b5a9',
        '--color-border-primary': '#3e3e38',
    },
};

let current = null;

/** The host's own page follows the theme too, so a screenshot shows the view as it sits in it. */
function paintHost(theme) {
    document.body.dataset.theme = theme;
}

/**
 * Embeds the view for one tool call: a sandboxed frame (scripts only, so an opaque origin), the
 * bridge connected to it before its page is set (the view sends ui/initialize at once), and the
 * call's arguments once the view says it is initialized. Resolves when they are sent.
 */
window.mountView = async ({ html, tool, args, theme }) => {
    if (current) await window.unmountView();
    paintHost(theme);
    const slot = document.getElementById('slot');
    const iframe = document.createElement('iframe');
    iframe.setAttribute('sandbox', 'allow-scripts');
    iframe.title = 'Code Sandbox run';
    slot.appendChild(iframe);

    const context = {
        theme,
        styles: { variables: STYLES[theme] },
        toolInfo: { tool },
        displayMode: 'inline',
        availableDisplayModes: ['inline'],
    };
    const view = { iframe, context, bridge: null, sizes: 0, lastSizeAt: 0, downloads: [], answered: [],
                   initialized: null };
    const bridge = new AppBridge(null, HOST_INFO, { serverTools: {}, downloadFile: {} }, { hostContext: context });
    view.bridge = bridge;
    // Every tools/call of the view goes to the test's MCP client, which decides what may pass.
    bridge.oncalltool = async (params) => {
        const result = await window.hostCallTool(params);
        view.answered.push(params.name);
        return result;
    };
    bridge.ondownloadfile = async (params) => {
        view.downloads.push(params);
        return {};
    };
    bridge.onsizechange = ({ height }) => {
        if (height != null) iframe.style.height = `${height}px`;
        view.sizes++;
        view.lastSizeAt = performance.now();
    };
    view.initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
    current = view;

    await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
    iframe.srcdoc = html;
    await view.initialized;
    await bridge.sendToolInput({ arguments: args });
};

/** The call's result, as the host hands it over once the server answered. */
window.showToolResult = async (result) => {
    await current.bridge.sendToolResult(result);
};

/**
 * Switches the theme after the fact. setHostContext takes the whole context and sends the view
 * only what changed (ui/notifications/host-context-changed: theme and styles).
 */
window.switchTheme = async (theme) => {
    paintHost(theme);
    current.context = { ...current.context, theme, styles: { variables: STYLES[theme] } };
    current.bridge.setHostContext(current.context);
};

/**
 * A ping to the view and its answer: messages to the frame arrive in order, so once it is back
 * the view has handled everything sent to it before.
 */
window.roundTrip = async () => {
    await current.bridge.request({ method: 'ping' }, EmptyResultSchema);
};

/** The tools/call requests of the view that the host has answered, by tool name. */
window.answered = () => current.answered;

/** What ui/download-file asked the host for. */
window.downloads = () => current.downloads;

/**
 * Resolves once the frame's height has followed the view's last size notification and nothing
 * moved for a while: then a screenshot shows the whole view and nothing half laid out.
 */
window.settled = async (quietMs = 300) => {
    for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (current.sizes > 0 && performance.now() - current.lastSizeAt >= quietMs) return true;
    }
};

/** ui/resource-teardown, then the frame goes, as when the chat scrolls a view away. */
window.unmountView = async () => {
    const view = current;
    current = null;
    try {
        await view.bridge.teardownResource({});
    } finally {
        await view.bridge.close();
        view.iframe.remove();
    }
};
