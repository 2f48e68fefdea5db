package main

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/asn"
	"github.com/linecheck/linecheck/internal/asn/data"
	"github.com/linecheck/linecheck/internal/report"
)

// newVersionCmd is `linecheck version`.
func newVersionCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the linecheck version, commit, build date, Go version and dataset dates",
		Long: `version prints what this binary is: its version, the commit it was built
from, when it was built (a release build stamps the date), the Go toolchain,
and the dates of the datasets it carries (the bundled IP-to-AS snapshot, and
the cache 'linecheck asn update' wrote, where there is one).

  linecheck version                 the same text as linecheck --version
  linecheck version --format json   one document, schema linecheck.version/v1`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f, err := report.ParseFormat(format, versionFormats...)
			if err != nil {
				return badInput(err)
			}
			if f.ForTerminal() {
				fmt.Fprint(c.OutOrStdout(), versionText())
				return nil
			}
			b, err := json.MarshalIndent(readVersionInfo(), "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "%s\n", b)
			return err
		},
	}
	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&format, "format", "table", "output `FORMAT`: "+report.FormatList(versionFormats...))
	})
	return c
}

// versionFormats are the formats version prints in.
var versionFormats = []report.Format{report.FormatTable, report.FormatJSON}

// versionInfo is `linecheck version --format json`.
type versionInfo struct {
	Schema     string    `json:"schema"`
	Version    string    `json:"version"`
	Commit     *string   `json:"commit"`      // null when the build does not know it
	CommitTime *string   `json:"commit_time"` // the toolchain's vcs stamp, where it has one
	Modified   bool      `json:"modified"`    // built with uncommitted changes
	BuildDate  *string   `json:"build_date"`  // stamped by a release build, else null
	Go         string    `json:"go"`
	OS         string    `json:"os"`
	Arch       string    `json:"arch"`
	Datasets   []dataset `json:"datasets"`
}

// dataset is one dataset the binary reads and how old it is.
type dataset struct {
	Name   string  `json:"name"`
	Date   string  `json:"date"`
	Source string  `json:"source"`
	Path   *string `json:"path"` // null for data built into the binary
	Used   bool    `json:"used"`
}

func readVersionInfo() versionInfo {
	b := readBuild()
	v := versionInfo{
		Schema: "linecheck.version/v1", Version: b.version, Modified: b.modified,
		Go: b.goVersion, OS: runtime.GOOS, Arch: runtime.GOARCH,
	}
	if b.revision != "" {
		v.Commit = &b.revision
	}
	if b.at != "" {
		v.CommitTime = &b.at
	}
	if buildDate != "" {
		d := buildDate
		v.BuildDate = &d
	}
	bundled := dataset{Name: "asn", Date: data.Snapshot, Source: data.Source, Used: true}
	if path, snap, src, ok := asn.PeekCache(); ok {
		newer := snap.Format("2006-01-02") > data.Snapshot
		bundled.Used = !newer
		p := path
		v.Datasets = append(v.Datasets, bundled, dataset{Name: "asn-cache", Date: snap.Format("2006-01-02"), Source: src, Path: &p, Used: newer})
	} else {
		v.Datasets = append(v.Datasets, bundled)
	}
	return v
}
