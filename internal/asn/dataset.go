package asn

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/linecheck/linecheck/internal/asn/data"
)

// bundledData is the snapshot built by gen/ (go generate), in the in-place
// form (encode.go). A string, not a []byte: embedded strings live in
// read-only data, and only the pages a lookup touches are ever read.
//
//go:embed data/asn.lcasn
var bundledData string

// Bundled is the embedded snapshot. Opening it reads its 128-byte header
// and nothing else (issue 35: the gzip form cost 80 ms of CPU to decode);
// the tests check its records once (TestBundledTableVerifies).
var Bundled = sync.OnceValues(func() (*Table, error) {
	t, err := openString(bundledData)
	if err != nil {
		return nil, fmt.Errorf("bundled ASN dataset: %w", err)
	}
	return t, nil
})

// CacheFile is the name of the updated copy in CacheDir.
const CacheFile = "asn.lcasn"

// oldCacheFile is the gzip form linecheck cached before issue 35; it is no
// longer read.
const oldCacheFile = "asn.lcasn.gz"

// CacheDir is where `linecheck asn update` keeps its copy: linecheck/ in the
// user's cache directory ($XDG_CACHE_HOME or ~/.cache on Linux).
func CacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the ASN dataset: %w", err)
	}
	return filepath.Join(d, "linecheck"), nil
}

// Choice is the table lookups use and why.
type Choice struct {
	Table *Table
	// Origin is "bundled" or "cache".
	Origin string
	// Path is the cache file when Origin is "cache".
	Path string
	// Note says why a cache file present was not used (damaged, older), ""
	// otherwise.
	Note string
}

// Default is the table every command that names hops uses: the cached copy
// when there is one whose checksum holds and is newer than the bundled snapshot,
// else the bundled one. Decided once per process.
var Default = sync.OnceValues(func() (Choice, error) { return choose("") })

func choose(dir string) (Choice, error) {
	b, err := Bundled()
	if err != nil {
		return Choice{}, err
	}
	ch := Choice{Table: b, Origin: "bundled"}
	if dir == "" {
		if dir, err = CacheDir(); err != nil {
			return ch, nil
		}
	}
	path := filepath.Join(dir, CacheFile)
	data, err := os.ReadFile(path)
	if err != nil {
		if !os.IsNotExist(err) {
			ch.Note = fmt.Sprintf("ASN cache %s not read (%v): using the bundled snapshot", path, err)
		} else if old := filepath.Join(dir, oldCacheFile); fileExists(old) {
			ch.Note = fmt.Sprintf("ASN cache %s is in the form of an older linecheck: using the bundled snapshot (run `linecheck asn update` again)", old)
		}
		return ch, nil
	}
	c, err := openSealed(data)
	if err != nil {
		ch.Note = fmt.Sprintf("ASN cache %s: %v; using the bundled snapshot (run `linecheck asn update` again)", path, err)
		return ch, nil
	}
	if !c.Snapshot.After(b.Snapshot) {
		ch.Note = fmt.Sprintf("ASN cache %s (%s) is not newer than the bundled snapshot (%s): using the bundled one",
			path, c.SnapshotDate(), b.SnapshotDate())
		return ch, nil
	}
	return Choice{Table: c, Origin: "cache", Path: path}, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// PeekCache reads only the header of the cached copy (snapshot and
// source), for `--version`: no record is read. ok is false when there is no
// readable cache file.
func PeekCache() (path string, snapshot time.Time, source string, ok bool) {
	dir, err := CacheDir()
	if err != nil {
		return "", time.Time{}, "", false
	}
	path = filepath.Join(dir, CacheFile)
	f, err := os.Open(path)
	if err != nil {
		return path, time.Time{}, "", false
	}
	defer f.Close()
	head := make([]byte, headerSize)
	if _, err := io.ReadFull(f, head); err != nil || string(head[:len(magic)]) != magic {
		return path, time.Time{}, "", false
	}
	h := string(head)
	off, n := le32(h, secTable+8*secSource), le32(h, secTable+4+8*secSource)
	if n > 4096 {
		return path, time.Time{}, "", false
	}
	src := make([]byte, n)
	if _, err := f.ReadAt(src, int64(off)); err != nil {
		return path, time.Time{}, "", false
	}
	return path, time.Unix(int64(le64(h, 8)), 0).UTC(), string(src), true
}

// VersionText is the dataset's part of `linecheck --version`: the bundled
// snapshot's date and source (constants: nothing is decoded), the licence's
// attribution, and the cached copy when there is one (its header only).
func VersionText() string {
	s := fmt.Sprintf("asn data: %s, bundled (%s)\n  %s\n", data.Snapshot, data.Source, Attribution)
	path, snap, src, ok := PeekCache()
	switch {
	case ok && snap.Format("2006-01-02") > data.Snapshot:
		s += fmt.Sprintf("asn cache: %s, %s (%s): used, newer than the bundled snapshot\n", snap.Format("2006-01-02"), path, src)
	case ok:
		s += fmt.Sprintf("asn cache: %s, %s: not used, not newer than the bundled snapshot\n", snap.Format("2006-01-02"), path)
	}
	return s
}
