import { clearLine, cursorTo } from 'node:readline';

export interface Progress {
  update(done: number): void;
  finish(done: number): void;
}

const format = (n: number) => n.toLocaleString('en-US');

/**
 * Progress of a long run on `stream`: a bar redrawn in place on a terminal, or a plain line at
 * each quarter when the output is a file or a pipe (CI logs, tests). Node's readline moves the
 * cursor; a dependency for one bar would be more code to trust than these lines.
 */
export function progress(stream: NodeJS.WriteStream, label: string, total: number): Progress {
  if (stream.isTTY) {
    let drawnAt = 0;
    const draw = (done: number) => {
      const width = 30;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
      cursorTo(stream, 0);
      clearLine(stream, 0);
      stream.write(`${label} [${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${String(percent).padStart(3)}%  ${format(done)}/${format(total)}`);
    };
    return {
      update: (done) => {
        if (Date.now() - drawnAt < 80) return;
        drawnAt = Date.now();
        draw(done);
      },
      finish: (done) => {
        draw(done);
        stream.write('\n');
      },
    };
  }
  let quarter = 0;
  return {
    update: (done) => {
      while (quarter < 3 && done >= (total * (quarter + 1)) / 4) {
        quarter += 1;
        stream.write(`${label}: ${format(done)} of ${format(total)} (${quarter * 25}%)\n`);
      }
    },
    finish: (done) => {
      stream.write(`${label}: ${format(done)} of ${format(total)} (100%)\n`);
    },
  };
}
