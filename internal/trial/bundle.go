package trial

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/linecheck/linecheck/internal/atomicfile"
)

// Schema names the manifest's format.
const Schema = "linecheck.trial/v1"

// Part statuses.
const (
	StatusPass        = "pass"
	StatusFail        = "fail"
	StatusRan         = "ran"         // ran, nothing to check it against
	StatusNotChecked  = "not checked" // could not run here; Reason says why
	StatusInterrupted = "interrupted"
	StatusError       = "error"
	StatusRunning     = "running" // the part is under way (the line part's hourly manifests)
)

// Part is one part of the trial as the bundle records it.
type Part struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	// Reason says why a part failed, was not checked or stopped.
	Reason string `json:"reason,omitempty"`
	// Lines are the part's findings, one sentence each, for the summary.
	Lines []string `json:"lines,omitempty"`
	// Files are the bundle paths the part wrote.
	Files []string `json:"files,omitempty"`
}

// FileEntry is one file of the bundle in the manifest.
type FileEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// Manifest is manifest.json.
type Manifest struct {
	Schema   string            `json:"schema"`
	Versions map[string]string `json:"versions"`
	Started  time.Time         `json:"started"`
	// Ended is when the manifest was last written; Complete says the trial
	// ran to its end (false while it runs and when it was stopped).
	Ended       time.Time `json:"ended"`
	Complete    bool      `json:"complete"`
	Interrupted bool      `json:"interrupted,omitempty"`
	Host        Identity  `json:"host"`
	Parts       []Part    `json:"parts"`
	// Line names the line part's files, absent where they were not made.
	Line LineFiles `json:"line"`
	// Files lists every file of the bundle but the manifest, by path.
	Files []FileEntry `json:"files"`
}

// LineFiles are the line part's files by bundle path: the backtrace
// document (what compare reads as recorded.return) and the throughput
// server's journal (recorded.bw).
type LineFiles struct {
	Backtrace string `json:"backtrace,omitempty"`
	BWJournal string `json:"bw_journal,omitempty"`
}

// Identity says which machine the bundle is of.
type Identity struct {
	Hostname  string `json:"hostname"`
	MachineID string `json:"machine_id,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	Form      string `json:"form,omitempty"`
}

// Bundle is a trial directory being written.
type Bundle struct {
	Dir      string
	manifest Manifest
}

// ManifestFile is the manifest's name in the bundle.
const ManifestFile = "manifest.json"

// Create makes the bundle directory; an existing non-empty one is refused
// (a bundle is never mixed with another's files).
func Create(dir string, started time.Time, versions map[string]string, id Identity) (*Bundle, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("--out %s: exists and is not empty; name a new directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: %w", dir, err)
	}
	b := &Bundle{Dir: dir, manifest: Manifest{Schema: Schema, Versions: versions, Started: started.UTC(), Host: id, Parts: []Part{}, Files: []FileEntry{}}}
	return b, b.Sync(started, false)
}

// WriteFile writes data at rel in the bundle, atomically.
func (b *Bundle) WriteFile(rel string, data []byte) error {
	p := filepath.Join(b.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, data, 0o644)
}

// WriteJSON writes v indented at rel.
func (b *Bundle) WriteJSON(rel string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return b.WriteFile(rel, append(data, '\n'))
}

// SetPart records (or replaces) a part's outcome.
func (b *Bundle) SetPart(p Part) {
	for i := range b.manifest.Parts {
		if b.manifest.Parts[i].Name == p.Name {
			b.manifest.Parts[i] = p
			return
		}
	}
	b.manifest.Parts = append(b.manifest.Parts, p)
}

// SetVersion records the version of a program the trial used (the NVIDIA
// driver, CUDA): the manifest's versions beside linecheck's own. An empty
// v records nothing.
func (b *Bundle) SetVersion(name, v string) {
	if v == "" {
		return
	}
	if b.manifest.Versions == nil {
		b.manifest.Versions = map[string]string{}
	}
	b.manifest.Versions[name] = v
}

// Parts returns the parts recorded so far.
func (b *Bundle) Parts() []Part { return append([]Part(nil), b.manifest.Parts...) }

// Sync rewrites the summary in every format and then the manifest (last,
// hashing every other file): after each part, and at the end with
// complete set. interrupted marks a trial stopped before its end.
func (b *Bundle) Sync(now time.Time, complete bool) error {
	return b.sync(now, complete, false)
}

// Interrupted writes the summary and manifest of a stopped trial.
func (b *Bundle) Interrupted(now time.Time) error {
	return b.sync(now, false, true)
}

func (b *Bundle) sync(now time.Time, complete, interrupted bool) error {
	m := &b.manifest
	m.Ended, m.Complete, m.Interrupted = now.UTC(), complete, interrupted
	var errs []error
	for _, s := range summaries {
		data, err := s.render(m)
		if err == nil {
			err = b.WriteFile(s.file, data)
		}
		errs = append(errs, err)
	}
	files, err := hashTree(b.Dir)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	m.Files = files
	errs = append(errs, b.WriteJSON(ManifestFile, m))
	return errors.Join(errs...)
}

// hashTree lists every regular file under dir but the manifest, sorted.
func hashTree(dir string) ([]FileEntry, error) {
	out := []FileEntry{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == ManifestFile || filepath.Base(rel)[0] == '.' {
			return nil // the manifest itself, and atomicfile's temporaries
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out = append(out, FileEntry{Path: rel, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// ReadManifest reads a bundle's manifest and checks every file it lists
// against its sha256, and that it lists every file there: a bundle
// edited, added to or cut short since is refused.
func ReadManifest(dir string) (*Manifest, error) {
	p := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("trial bundle %s: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if m.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", p, m.Schema, Schema)
	}
	listed := map[string]bool{}
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	present, err := hashTree(dir)
	if err != nil {
		return nil, fmt.Errorf("trial bundle %s: %w", dir, err)
	}
	for _, f := range present {
		if !listed[f.Path] {
			return nil, fmt.Errorf("%s: %s is not in the manifest (added since the trial?)", p, f.Path)
		}
	}
	for _, f := range m.Files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			return nil, fmt.Errorf("%s: lists %s: %w", p, f.Path, err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != f.SHA256 {
			return nil, fmt.Errorf("%s: %s does not match its sha256 (edited since the trial?)", p, f.Path)
		}
	}
	return &m, nil
}
