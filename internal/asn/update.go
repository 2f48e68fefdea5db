package asn

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/atomicfile"
)

// DefaultURLs are the source's published files (the jsDelivr mirror of the
// npm packages' latest version): the AS ranges and the registries'
// countries, IPv4 and IPv6.
var DefaultURLs = []string{
	"https://cdn.jsdelivr.net/npm/@ip-location-db/asn/asn-ipv4.csv",
	"https://cdn.jsdelivr.net/npm/@ip-location-db/asn/asn-ipv6.csv",
	"https://cdn.jsdelivr.net/npm/@ip-location-db/asn-country/asn-country-ipv4.csv",
	"https://cdn.jsdelivr.net/npm/@ip-location-db/asn-country/asn-country-ipv6.csv",
}

// MaxDownload bounds one downloaded file as it comes (the largest source
// file is about 24 MB).
const MaxDownload = 256 << 20

// MaxExpanded bounds what all the files of one update hold once
// decompressed: a small gzip can expand a thousandfold (issue 37: 5.8 MB of
// gzip held 2 GB of rows and took 6.3 GB). The 2026-06-17 snapshot is
// 40.7 MB as CSV; this is between four and five times that.
const MaxExpanded = 192 << 20

// UpdateOptions say where Update downloads from and writes to.
type UpdateOptions struct {
	// URLs are the CSV files to build the table of (plain or gzip); each
	// holds AS rows or country rows, of either family. Default DefaultURLs.
	URLs []string
	// Dir is the cache directory (default CacheDir()).
	Dir string
	// Client does the downloads (default: http.Client with Timeout).
	Client *http.Client
	// Timeout bounds the whole download (default 5 minutes).
	Timeout time.Duration
	// Now is the snapshot time of files whose server gives no
	// Last-Modified (default time.Now).
	Now func() time.Time
	// Progress, when set, is told about each file as it arrives.
	Progress func(msg string)
	// MaxExpanded bounds the decompressed bytes of all files together
	// (default MaxExpanded); MaxRows their rows (default MaxRows).
	MaxExpanded int64
	MaxRows     int
}

// UpdateResult says what Update did.
type UpdateResult struct {
	Path  string
	Table *Table
	// Bytes is the size of the file written.
	Bytes int
	// Used is false when the new copy is not newer than the bundled
	// snapshot: lookups keep the bundled one then.
	Used bool
}

// Update downloads the source files, builds a table of them, checks that it
// parses whole, stays within MaxExpanded bytes and MaxRows rows, and keeps
// both families of both lists (checkCoverage), and only then replaces the
// cached copy in one rename (internal/atomicfile). On any failure (HTTP
// error, a file cut short, content that is not the source's CSV, a bound
// passed, a timeout, a full disk) the old copy stays as it was and the
// error says why.
func Update(ctx context.Context, o UpdateOptions) (*UpdateResult, error) {
	if len(o.URLs) == 0 {
		o.URLs = DefaultURLs
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: o.Timeout}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Dir == "" {
		d, err := CacheDir()
		if err != nil {
			return nil, err
		}
		o.Dir = d
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if o.MaxExpanded <= 0 {
		o.MaxExpanded = MaxExpanded
	}
	b := Builder{MaxRows: o.MaxRows}
	left := o.MaxExpanded
	var snap time.Time
	var names []string
	for _, u := range o.URLs {
		name, mod, err := fetchInto(ctx, o.Client, u, &b, &expandLimit{left: &left, max: o.MaxExpanded})
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("%s: no complete download within %v: %w", u, o.Timeout, err)
			}
			return nil, err
		}
		if mod.IsZero() {
			mod = o.Now()
		}
		if mod.After(snap) {
			snap = mod
		}
		names = append(names, name)
		if o.Progress != nil {
			o.Progress("read " + u)
		}
	}
	t, err := b.Table(snap, "downloaded "+strings.Join(names, ", "))
	if err != nil {
		return nil, err
	}
	bt, err := Bundled()
	if err != nil {
		return nil, err
	}
	if err := checkCoverage(t, bt); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := Encode(&buf, t); err != nil {
		return nil, err
	}
	if _, err := Open(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("the new table does not read back: %w", err)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache directory: %w", err)
	}
	p := filepath.Join(o.Dir, CacheFile)
	if err := atomicfile.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("writing %s: %w (the previous copy is kept)", p, err)
	}
	return &UpdateResult{Path: p, Table: t, Bytes: buf.Len(), Used: t.Snapshot.After(bt.Snapshot)}, nil
}

// checkCoverage refuses a new table that lost a family or a large share of
// the reference's ranges: each of its four lists (AS IPv4, AS IPv6,
// country IPv4, country IPv6) must hold at least half as many ranges as
// ref's. A source consolidates ranges now and then, but not by half; a
// download that did is a wrong or partial file.
func checkCoverage(t, ref *Table) error {
	v4, v6 := t.Ranges()
	c4, c6 := t.CountryRanges()
	r4, r6 := ref.Ranges()
	rc4, rc6 := ref.CountryRanges()
	for _, c := range []struct {
		what      string
		got, have int
	}{
		{"IPv4 AS", v4, r4}, {"IPv6 AS", v6, r6}, {"IPv4 country", c4, rc4}, {"IPv6 country", c6, rc6},
	} {
		if c.got == 0 {
			return fmt.Errorf("the download holds no %s ranges: not used (give the four files: asn-ipv4.csv, asn-ipv6.csv, asn-country-ipv4.csv, asn-country-ipv6.csv)", c.what)
		}
		if 2*c.got < c.have {
			return fmt.Errorf("the download holds %d %s ranges, fewer than half the %d of the snapshot in use (%s): not used (a partial or wrong file?)",
				c.got, c.what, c.have, ref.SnapshotDate())
		}
	}
	return nil
}

// expandLimit counts the decompressed bytes of all files against one bound.
type expandLimit struct {
	r    io.Reader
	left *int64
	max  int64
}

func (e *expandLimit) Read(p []byte) (int, error) {
	if *e.left < 0 {
		return 0, e.err()
	}
	if int64(len(p)) > *e.left+1 {
		p = p[:*e.left+1]
	}
	n, err := e.r.Read(p)
	*e.left -= int64(n)
	if *e.left < 0 {
		return 0, e.err()
	}
	return n, err
}

func (e *expandLimit) err() error {
	return fmt.Errorf("the files expand to more than %d MiB in all: not the ASN dataset (about 41 MB)", e.max>>20)
}

// fetchInto downloads one file and adds its rows to b, reading at most what
// lim leaves; it returns the file's name (for the table's source) and its
// Last-Modified time.
func fetchInto(ctx context.Context, c *http.Client, u string, b *Builder, lim *expandLimit) (string, time.Time, error) {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
		return "", time.Time{}, fmt.Errorf("%q is not an http(s) URL", u)
	}
	name := path.Base(pu.Path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", time.Time{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", time.Time{}, fmt.Errorf("%s: HTTP %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDownload+1))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%s: download cut short after %d bytes: %w", u, len(body), err)
	}
	if len(body) > MaxDownload {
		return "", time.Time{}, fmt.Errorf("%s: larger than %d MiB: not an ASN CSV file", u, MaxDownload>>20)
	}
	if resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength {
		return "", time.Time{}, fmt.Errorf("%s: got %d of %d bytes: download cut short", u, len(body), resp.ContentLength)
	}
	var r io.Reader = bytes.NewReader(body)
	if len(body) > 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("%s: %w", u, err)
		}
		r = zr
	}
	lim.r = r
	if err := b.AddCSV(name, bufio.NewReader(lim)); err != nil {
		return "", time.Time{}, fmt.Errorf("%s: %w", u, err)
	}
	mod, _ := http.ParseTime(resp.Header.Get("Last-Modified"))
	return name, mod.UTC(), nil
}
