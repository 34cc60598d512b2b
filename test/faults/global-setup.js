// The fault tests run the services as child processes of the built code (dist/), so that they
// can be killed with SIGKILL: build once before the first fault test file.
import { execFileSync } from 'node:child_process';

export default function buildOnce() {
  execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
}
