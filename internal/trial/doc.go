// Package trial writes the bundle of a delivery trial (linecheck trial):
// one directory holding each part's output in the format compare reads
// (host.json, gpu/ with nvidia-smi's saved outputs, baseline.json and its
// log), a summary in every format (summary.txt, .md, .json, .html), and
// manifest.json, written last, listing every file with its sha256, the
// versions, start and end, and the host's identity.
//
// Every file is written atomically, and the summary and manifest are
// rewritten after each part: a trial stopped by Ctrl-C or a failing part
// leaves a complete, readable bundle of what did run, each part saying
// whether it ran, passed, failed or was not checked, and why.
package trial
