// `node tools/check-node-version.mjs MAJOR.MINOR WHAT`: exits 1, saying plainly what is needed, when
// this Node.js is older. `npm start` and `npm run dist` run it first: Electron 45's installer
// (@electron/get 5) needs Node.js 22.12, and would otherwise fail deep inside itself.
const [required = '', what = 'this command'] = process.argv.slice(2);
const [needMajor, needMinor] = required.split('.').map(Number);
if (!Number.isInteger(needMajor) || !Number.isInteger(needMinor)) {
  process.stderr.write('usage: node tools/check-node-version.mjs MAJOR.MINOR WHAT\n');
  process.exit(2);
}
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  process.stderr.write(
    `${what} needs Node.js ${required} or later; this is Node.js ${process.versions.node}.\n` +
      'Install a newer Node.js (https://nodejs.org). Browser mode runs on Node.js 20.19 or later: npm run web\n',
  );
  process.exit(1);
}
