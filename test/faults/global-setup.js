// The fault tests run the services as child processes of the built code (dist/), so that they
// can be killed with SIGKILL: build once before the first fault test file, unless the caller
// has just built (FAULTS_BUILD=skip, which .ci/run sets right after its build step).
import { execFileSync } from 'node:child_process';

export default function buildOnce() {
  if (process.env.FAULTS_BUILD === 'skip') return;
  execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
}
