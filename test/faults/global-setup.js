// The fault tests run the services as child processes of the built code (dist/), so that they
// can be killed with SIGKILL: build once before the first fault test file.
import { execFileSync } from 'node:child_process';

// .ci/run builds right before and says so with FAULTS_BUILD=skip.
export default function buildOnce() {
  if (process.env.FAULTS_BUILD === 'skip') return;
  execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
}
