package compare

// Transitional aliases (issue 34, the house move): the names below moved
// out of compare; these keep compare's live loops (moving to
// internal/engine) and the packages not yet updated compiling. New code
// uses the new homes directly; each alias goes once nothing refers to it.

import (
	"github.com/linecheck/linecheck/internal/candidates"
)

// The candidates file's schema: internal/candidates.
type (
	File          = candidates.File
	Place         = candidates.Place
	Candidate     = candidates.Candidate
	Target        = candidates.Target
	Recorded      = candidates.Recorded
	Traffic       = candidates.Traffic
	SLA           = candidates.SLA
	LoadOptions   = candidates.LoadOptions
	BandwidthTest = candidates.BandwidthTest
)

var (
	Load            = candidates.Load
	LoadWith        = candidates.LoadWith
	Parse           = candidates.Parse
	ParseWith       = candidates.ParseWith
	ErrRecordedOnly = candidates.ErrRecordedOnly
)
