package compare

// Transitional aliases (issue 34, the house move): the names below moved
// out of compare; these keep compare's live loops (moving to
// internal/engine) and the packages not yet updated compiling. New code
// uses the new homes directly; each alias goes once nothing refers to it.

import (
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// Types that moved: the schema to internal/candidates, the judgement to
// internal/verdict.
type (
	File           = candidates.File
	Candidate      = candidates.Candidate
	Target         = candidates.Target
	SLA            = candidates.SLA
	LoadOptions    = candidates.LoadOptions
	BandwidthTest  = candidates.BandwidthTest
	Window         = verdict.Window
	Evaluation     = verdict.Evaluation
	RouteQuality   = verdict.RouteQuality
	TargetResult   = verdict.TargetResult
	Verdict        = verdict.Verdict
	Check          = verdict.Check
	Monthly        = verdict.Monthly
	Money          = verdict.Money
	TrafficSummary = verdict.TrafficSummary
	Throughput     = verdict.Throughput
	RankKey        = verdict.RankKey
	Pricing        = verdict.Pricing
	Measurement    = verdict.Measurement
)

// Check names and notes: internal/verdict.
const (
	CheckRTTP95           = verdict.CheckRTTP95
	CheckLoss             = verdict.CheckLoss
	CheckJitter           = verdict.CheckJitter
	CheckLineClass        = verdict.CheckLineClass
	CheckStretch          = verdict.CheckStretch
	CheckLineClassCarrier = verdict.CheckLineClassCarrier
	NoData                = verdict.NoData
	CheckMinThroughput    = verdict.CheckMinThroughput
	CheckMaxOversell      = verdict.CheckMaxOversell
)

// Functions and errors that moved.
var (
	Load             = candidates.Load
	LoadWith         = candidates.LoadWith
	ParseWith        = candidates.ParseWith
	ErrRecordedOnly  = candidates.ErrRecordedOnly
	NewWindow        = verdict.NewWindow
	RelatePort       = verdict.RelatePort
	EvaluateDelivery = verdict.EvaluateDelivery
	RankLess         = verdict.RankLess
	FloorMs          = verdict.FloorMs
)
