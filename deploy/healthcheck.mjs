// Container health check of deploy/Dockerfile: GET /health/ready on the service's own port,
// exit 0 when it answers 2xx. Plain ESM, no dependencies, so the image needs no curl or wget.
const PORTS = {
  gateway: ['PORT', 3000],
  'reporting-projection': ['REPORTING_HTTP_PORT', 3101],
  'payouts-read': ['PAYOUTS_HTTP_PORT', 3102],
  'timezone-settings': ['TIMEZONE_HTTP_PORT', 3103],
  'recommendations': ['RECOMMENDATIONS_HTTP_PORT', 3104],
};
const [variable, fallback] = PORTS[process.env.SERVICE ?? ''] ?? ['PORT', 3000];
const port = Number(process.env[variable] || fallback);
fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(4000) }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
