// Command linecheck tells a network engineer, before a contract is signed, how
// good a candidate line is and what it will really cost per month.
//
// Each subcommand lives in its own file and registers itself in init().
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/asn"
	"github.com/linecheck/linecheck/internal/privsep"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = defaultVersion

// commit may be set at build time with -ldflags "-X main.commit=…" where
// the Go toolchain cannot stamp it (a build outside a git checkout, or in a
// git worktree, which the toolchain does not recognise).
var commit string

// buildDate may be set at build time with -ldflags "-X main.buildDate=…"
// (RFC 3339, UTC): scripts/release stamps it.
var buildDate string

// defaultVersion is the version of a build that was not given one.
const defaultVersion = "0.1.0-dev"

// newRootCmd builds the command tree of one run: the root and every
// command, each with its own options (no state outlives the run).
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "linecheck",
		Short: "Line quality and monthly cost of candidate servers, side by side",
		Long: `linecheck answers the two questions that decide where to rent a server:

  How good is the line?   latency, jitter and loss sweeps (ping), hop-by-hop
                          traceroute with mtr-style statistics (trace), the
                          carrier line the route really rides (CN2 GIA, 9929,
                          CMIN2 …) and how far it is from the physical floor;
                          run on the server, the return routes toward
                          Telecom, Unicom and Mobile users (backtrace).
  What will it cost?      billing simulation over recorded traffic logs (bill):
                          fixed port, per GB, or the 95th percentile of
                          5-minute samples, under each provider's rules.

compare puts both side by side for a list of candidates and ends in a verdict;
tui shows the same live; demo runs it all offline on bundled samples.

Exit codes: 0 success, 1 a validation verdict failed (ping: a target never
replied), 2 bad usage or bad input (ping: a name did not resolve), 130
interrupted (Ctrl-C) after the partial report was written.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return badInput(fmt.Errorf("%w\nRun '%s --help' for usage", flagValueError(err), c.CommandPath()))
	})
	root.Version = version
	// The version text reads the build information; it is made when --version
	// is given, not at start-up of every command.
	root.SetVersionTemplate("{{linecheckVersion}}")
	// The one place where the commands are added: a new command is a
	// newXxxCmd() in its own file and one entry here.
	root.AddCommand(
		newPingCmd(),
		newTraceCmd(),
		newBacktraceCmd(),
		newBWCmd(),
		newBillCmd(),
		newCompareCmd(),
		newTUICmd(),
		newDemoCmd(),
		newServeCmd(),
		newGPUCmd(),
		newTrialCmd(),
		newASNCmd(),
		newVantageCmd(),
		newVersionCmd(),
		newReleaseFilesCmd(),
	)
	return root
}

// flagDefs are the flag definitions of each command not made yet. Defining
// every command's flags (some 250, with their help text) at start-up cost
// every run about 0.2 ms, a few per cent of a one-shot trace; a run parses
// only its own command's flags, so only those are made (prepareFlags).
var flagDefs = map[*cobra.Command][]func(*pflag.FlagSet){}

// lazyFlags adds def to the flag definitions of c, run in the order given
// when c is about to run (or to be shown in help or completion).
func lazyFlags(c *cobra.Command, defs ...func(*pflag.FlagSet)) {
	flagDefs[c] = append(flagDefs[c], defs...)
}

// defineFlags makes the flags of c, once.
func defineFlags(c *cobra.Command) {
	defs := flagDefs[c]
	delete(flagDefs, c)
	for _, def := range defs {
		def(c.Flags())
	}
}

// defineAllFlags makes every command's flags, for what may look at any
// command: help, completion, a mistyped command.
func defineAllFlags(root *cobra.Command) {
	for _, c := range root.Commands() {
		defineFlags(c)
	}
}

// forgetFlags drops the definitions a run did not need, with its tree.
func forgetFlags(c *cobra.Command) {
	delete(flagDefs, c)
	for _, s := range c.Commands() {
		forgetFlags(s)
	}
}

// prepareFlags makes the flags of the command args run. The root's own
// help and --version need none: the command list shows names and short
// descriptions only. Anything else that is not a plain subcommand (help
// TOPIC, completion, a mistyped name) gets them all.
func prepareFlags(root *cobra.Command, args []string) {
	if len(flagDefs) == 0 {
		return
	}
	c, _, err := root.Find(args)
	switch {
	case err != nil || c == nil:
		defineAllFlags(root)
	case c == root:
	default:
		defineFlags(c)
	}
}

// exitError carries the process exit code for an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// verdictFailed makes the process exit 1 (a validation verdict failed) after
// the report has been written; msg goes to stderr.
func verdictFailed(msg string) error { return &exitError{code: 1, err: errors.New(msg)} }

// badInput makes the process exit 2 with err as the message.
func badInput(err error) error { return &exitError{code: 2, err: err} }

// oneArg is cobra.ExactArgs(1) with a message that says what the one
// argument is and where to read more.
func oneArg(what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == 1 {
			return nil
		}
		got := "none"
		if len(args) > 1 {
			got = fmt.Sprintf("%d: %s", len(args), strings.Join(args, " "))
		}
		return badInput(fmt.Errorf("%s takes one %s, got %s\nRun '%s --help' for usage",
			c.Name(), what, got, c.CommandPath()))
	}
}

func init() {
	// cobra's template functions are process-wide.
	cobra.AddTemplateFunc("linecheckVersion", versionText)
}

// versionText is what `linecheck version` and `linecheck --version` print:
// the version, the commit the binary was built from and the Go toolchain,
// read from the build information the Go linker embeds.
func versionText() string {
	b := readBuild()
	rev := b.revision
	if rev == "" {
		rev = "unknown (built without version control information)"
	} else {
		if b.at != "" {
			rev += " (" + b.at + ")"
		}
		if b.modified {
			rev += " with uncommitted changes"
		}
	}
	built := ""
	if buildDate != "" {
		built = "built: " + buildDate + "\n"
	}
	return fmt.Sprintf("linecheck %s\ncommit: %s\n%sgo: %s %s/%s\n", b.version, rev, built, b.goVersion, runtime.GOOS, runtime.GOARCH) + asn.VersionText()
}

// build is what the binary knows of its own build.
type build struct {
	version, goVersion string
	revision, at       string // the commit ("" when unknown) and its time
	modified           bool   // built with uncommitted changes
}

// readBuild reads the version (-ldflags -X main.version, or a tagged
// module's), the commit (-X main.commit, or the toolchain's vcs stamp) and
// the Go version from the build information the Go linker embeds.
func readBuild() build {
	b := build{version: version, goVersion: runtime.Version(), revision: commit}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	// A build from a tagged module (go install …@v1.2.3) knows its
	// version; -ldflags -X main.version wins over it.
	if version == defaultVersion && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.version = strings.TrimPrefix(bi.Main.Version, "v")
	}
	if bi.GoVersion != "" {
		b.goVersion = bi.GoVersion
	}
	if commit != "" {
		return b
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.revision = s.Value
		case "vcs.time":
			b.at = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	if b.revision == "" {
		b.at, b.modified = "", false
	}
	return b
}

func main() {
	if privsep.IsHelper() {
		os.Exit(privsep.RunHelper())
	}
	separatePrivileges = true
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI with args and returns the exit code.
func run(args []string) int { return runContext(context.Background(), args) }

// runContext is run with a context: tests put their resolvers and clocks
// into it.
func runContext(ctx context.Context, args []string) int { return runIO(ctx, args, nil, nil) }

// runIO is runContext writing to stdout and stderr (nil: the process's).
func runIO(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	defer forgetFlags(root)
	args = mtrReportArgs(args)
	root.SetArgs(args)
	if stdout != nil {
		root.SetOut(stdout)
	}
	if stderr != nil {
		root.SetErr(stderr)
	}
	prepareFlags(root, args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := 2
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintln(root.ErrOrStderr(), "linecheck:", err)
	return code
}
