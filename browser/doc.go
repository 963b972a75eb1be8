// Package browser holds Parley's browser tests: the MCP App of
// examples/apps rendered in headless Chromium by a test host page built on
// the extension's own host library, and the MCP Inspector's probe of it.
// It is a module of its own, as interop is, so that the root module's
// tests never need Node.js or a browser; make test runs it as the apps
// stage (see README.md).
package browser
