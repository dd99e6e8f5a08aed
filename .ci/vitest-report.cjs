// What .ci/run reads from the legs' vitest JSON reports, in one place (a report that is
// missing or unreadable counts as no test run):
//   counts FILE      "passed failed total" of one leg
//   failures FILE…   a line per failed test (or failed file), "FAILED <leg> <file> > <test>: <first line>"
//   total FILE…      the closing line over every leg, "N passed, N failed"
//   slowest FILE…    per leg, its test files' summed time and its 15 slowest files, in seconds: the
//                    time vitest reports for a file's tests (its import and beforeAll hooks are not in it)
const { readFileSync } = require("node:fs");
const { basename, relative } = require("node:path");

function read(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

const firstLine = (text) =>
  String(text ?? "")
    .split("\n")[0]
    .slice(0, 300);

const commands = {
  counts([file]) {
    const report = read(file);
    console.log(report === undefined ? "0 0 0" : `${report.numPassedTests} ${report.numFailedTests} ${report.numTotalTests}`);
  },
  failures(files) {
    for (const file of files) {
      const leg = basename(file, ".json");
      for (const result of read(file)?.testResults ?? []) {
        const name = relative(process.cwd(), result.name);
        const failed = (result.assertionResults ?? []).filter((assertion) => assertion.status === "failed");
        // A file that failed with no failed test (it did not load, a hook threw): its own message.
        if (result.status === "failed" && failed.length === 0) console.log(`FAILED ${leg} ${name}: ${firstLine(result.message)}`);
        for (const assertion of failed) {
          console.log(`FAILED ${leg} ${name} > ${assertion.fullName}: ${firstLine((assertion.failureMessages ?? [])[0])}`);
        }
      }
    }
  },
  slowest(files) {
    for (const file of files) {
      const leg = basename(file, ".json");
      const times = (read(file)?.testResults ?? []).map((result) => [
        (result.endTime - result.startTime) / 1000,
        relative(process.cwd(), result.name),
      ]);
      times.sort((a, b) => b[0] - a[0]);
      const sum = times.reduce((total, [seconds]) => total + seconds, 0);
      console.log(
        `leg ${leg}: ${times.length} test files, ${sum.toFixed(0)} s in their tests (imports and beforeAll hooks not counted); the slowest:`,
      );
      for (const [seconds, name] of times.slice(0, 15)) console.log(`  ${seconds.toFixed(1).padStart(6)} s  ${name}`);
    }
  },
  total(files) {
    let passed = 0;
    let failed = 0;
    for (const file of files) {
      const report = read(file);
      if (report === undefined) continue;
      passed += report.numPassedTests;
      failed += report.numFailedTests;
    }
    console.log(`${passed} passed, ${failed} failed`);
  },
};

const [command, ...files] = process.argv.slice(2);
commands[command](files);
