// Jest's module loader cannot require() an ES module before Node 24.9 (Node itself can since
// 20.19). @fastify/static requires content-disposition 3, which is ESM only, for
// reply.download() — which the gateway never calls. jest.config.js maps the package here, so
// that the gateway loads under Jest; whoever calls it in a test learns at once.
function unavailable() {
  throw new Error('content-disposition is not available under Jest (test/support/content-disposition.cjs)');
}
module.exports = unavailable;
module.exports.create = unavailable;
module.exports.parse = unavailable;
