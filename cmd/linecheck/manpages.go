package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/atomicfile"
)

// newReleaseFilesCmd is the hidden `linecheck __release-files`: the man pages
// and shell completions a package installs, generated from the command tree
// itself so that they never drift from --help (scripts/release runs it).
func newReleaseFilesCmd() *cobra.Command {
	var man, comp, date string
	c := &cobra.Command{
		Use:    "__release-files",
		Short:  "Write the man pages and shell completions of this command tree (for packaging)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if man == "" && comp == "" {
				return badInput(fmt.Errorf("give --man DIR, --completions DIR or both"))
			}
			root := c.Root()
			defineTree(root)
			if man != "" {
				day := time.Now().UTC()
				if date != "" {
					d, err := time.Parse("2006-01-02", date)
					if err != nil {
						return badInput(fmt.Errorf("--date %q: want YYYY-MM-DD", date))
					}
					day = d
				}
				if err := writeManPages(root, man, day, readBuild().version); err != nil {
					return err
				}
			}
			if comp != "" {
				if err := writeCompletions(root, comp); err != nil {
					return err
				}
			}
			return nil
		},
	}
	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&man, "man", "", "write section-1 man pages (linecheck.1, linecheck-COMMAND.1 …) into `DIR`")
		f.StringVar(&comp, "completions", "", "write linecheck.bash, _linecheck (zsh) and linecheck.fish into `DIR`")
		f.StringVar(&date, "date", "", "the pages' date, `YYYY-MM-DD` (default today, UTC)")
	})
	return c
}

// defineTree makes the flags of every command of the tree.
func defineTree(c *cobra.Command) {
	defineFlags(c)
	for _, s := range c.Commands() {
		defineTree(s)
	}
}

// manCommands lists the commands that get a page: the root and every
// command a user can call, depth first.
func manCommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	if c.Hidden || c.Name() == "help" || c.Name() == "completion" && c.HasParent() && !c.Parent().HasParent() {
		return nil
	}
	out = append(out, c)
	subs := c.Commands()
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name() < subs[j].Name() })
	for _, s := range subs {
		out = append(out, manCommands(s)...)
	}
	return out
}

// manName is the page name of c: linecheck, linecheck-compare, linecheck-asn-update.
func manName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-")
}

func writeManPages(root *cobra.Command, dir string, day time.Time, version string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range manCommands(root) {
		page := manPage(c, day, version)
		if err := atomicfile.WriteFile(filepath.Join(dir, manName(c)+".1"), page, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// manPage renders one command's page in man(7) macros.
func manPage(c *cobra.Command, day time.Time, version string) []byte {
	var b bytes.Buffer
	name := manName(c)
	fmt.Fprintf(&b, ".TH %s 1 %q %q \"linecheck manual\"\n", strings.ToUpper(name), day.Format("2006-01-02"), "linecheck "+version)
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(&b, "%s \\- %s\n", roffEscape(name), roffEscape(c.Short))
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B %s\n", roffEscape(c.CommandPath()))
	use := strings.TrimSpace(strings.TrimPrefix(c.UseLine(), c.CommandPath()))
	if c.HasAvailableSubCommands() && !c.Runnable() {
		use = "COMMAND [flags]"
	}
	if use != "" {
		fmt.Fprintf(&b, "%s\n", roffEscape(use))
	}
	b.WriteString(".SH DESCRIPTION\n")
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	writeRoffText(&b, desc)
	if c.HasAvailableSubCommands() {
		b.WriteString(".SH COMMANDS\n")
		for _, s := range manCommands(c)[1:] {
			if s.Parent() != c {
				continue
			}
			fmt.Fprintf(&b, ".TP\n.BR %s (1)\n%s\n", manName(s), roffEscape(s.Short))
		}
	}
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS\n")
		writeRoffFlags(&b, fs)
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS INHERITED FROM PARENT COMMANDS\n")
		writeRoffFlags(&b, fs)
	}
	b.WriteString(".SH EXIT STATUS\n")
	writeRoffText(&b, "0 success; 1 a validation verdict failed (ping: a target never replied); "+
		"2 bad usage or bad input, with a message that names the file, line and field; "+
		"130 interrupted (Ctrl-C) after the partial report was written.")
	b.WriteString(".SH SEE ALSO\n")
	var see []string
	if c.HasParent() {
		see = append(see, manName(c.Parent())+"(1)")
	}
	for _, s := range manCommands(c)[1:] {
		if s.Parent() == c {
			see = append(see, manName(s)+"(1)")
		}
	}
	if !c.HasParent() {
		see = append(see, "mtr(8)", "traceroute(8)", "ping(8)", "iperf3(1)")
	}
	b.WriteString(roffEscape(strings.Join(see, ", ")) + "\n")
	return b.Bytes()
}

// writeRoffText writes help text as it reads on a terminal: paragraphs
// filled, indented blocks (examples, tables) kept as they are.
func writeRoffText(b *bytes.Buffer, text string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	verbatim := false
	for i, l := range lines {
		indented := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
		switch {
		case strings.TrimSpace(l) == "":
			if verbatim {
				b.WriteString(".fi\n.RE\n")
				verbatim = false
			}
			if i > 0 {
				b.WriteString(".PP\n")
			}
			continue
		case indented && !verbatim:
			b.WriteString(".RS 2\n.nf\n")
			verbatim = true
		case !indented && verbatim:
			b.WriteString(".fi\n.RE\n")
			verbatim = false
		}
		b.WriteString(roffEscape(l) + "\n")
	}
	if verbatim {
		b.WriteString(".fi\n.RE\n")
	}
}

// writeRoffFlags writes each flag as a tagged paragraph: its names, its
// value's name and default, then its help text.
func writeRoffFlags(b *bytes.Buffer, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		varname, usage := pflag.UnquoteUsage(f)
		tag := "\\fB\\-\\-" + roffEscape(f.Name) + "\\fR"
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			tag = "\\fB\\-" + roffEscape(f.Shorthand) + "\\fR, " + tag
		}
		if varname != "" {
			tag += " \\fI" + roffEscape(varname) + "\\fR"
		}
		fmt.Fprintf(b, ".TP\n%s\n", tag)
		u := usage
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" {
			u += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		for i, l := range strings.Split(u, "\n") {
			if i > 0 {
				b.WriteString(".br\n")
			}
			b.WriteString(roffEscape(l) + "\n")
		}
	})
}

// roffEscape makes text safe in a roff line: backslashes, hyphens and
// non-ASCII characters
// escaped (a '-' would typeset as a hyphen, not the minus of an option), and
// a line starting with '.' or '\” kept from reading as a request.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	// Non-ASCII as groff's Unicode escapes: a page renders the same
	// whether or not the man viewer converts UTF-8 first (preconv).
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\[u%04X]`, r)
		}
	}
	return b.String()
}

// writeCompletions writes cobra's completion scripts for bash (v2), zsh and fish.
func writeCompletions(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gens := []struct {
		file string
		gen  func(*bytes.Buffer) error
	}{
		{"linecheck.bash", func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) }},
		{"_linecheck", func(b *bytes.Buffer) error { return root.GenZshCompletion(b) }},
		{"linecheck.fish", func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) }},
	}
	for _, g := range gens {
		var b bytes.Buffer
		if err := g.gen(&b); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, g.file), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
