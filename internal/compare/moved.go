package compare

// Transitional aliases (issue 34, the house move): the names below moved
// out of compare; these keep compare's live loops (moving to
// internal/engine) and the packages not yet updated compiling. New code
// uses the new homes directly; each alias goes once nothing refers to it.

import (
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
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

// The judgement (windows, evaluation, SLA checks, ranking, cost):
// internal/verdict.
type (
	Window               = verdict.Window
	Evaluation           = verdict.Evaluation
	RouteQuality         = verdict.RouteQuality
	RTTSummary           = verdict.RTTSummary
	JitterSummary        = verdict.JitterSummary
	TargetResult         = verdict.TargetResult
	Verdict              = verdict.Verdict
	Check                = verdict.Check
	Monthly              = verdict.Monthly
	Projected            = verdict.Projected
	Money                = verdict.Money
	CostItem             = verdict.CostItem
	SchemeCost           = verdict.SchemeCost
	TrafficSummary       = verdict.TrafficSummary
	Savings              = verdict.Savings
	Throughput           = verdict.Throughput
	GPUDelivery          = verdict.GPUDelivery
	HostDelivery         = verdict.HostDelivery
	InterconnectDelivery = verdict.InterconnectDelivery
	PathLine             = verdict.PathLine
	PathLineHop          = verdict.PathLineHop
	RankKey              = verdict.RankKey
	Pricing              = verdict.Pricing
	Quote                = verdict.Quote
	Rebilled             = verdict.Rebilled
	HorizonBasis         = verdict.HorizonBasis
	CandidateHorizon     = verdict.CandidateHorizon
	CandidateUsage       = verdict.CandidateUsage
	UsageSummary         = verdict.UsageSummary
	UsageCurve           = verdict.UsageCurve
	Measurement          = verdict.Measurement
)

const (
	CheckRTTP95           = verdict.CheckRTTP95
	CheckLoss             = verdict.CheckLoss
	CheckJitter           = verdict.CheckJitter
	CheckLineClass        = verdict.CheckLineClass
	CheckStretch          = verdict.CheckStretch
	CheckPathMTU          = verdict.CheckPathMTU
	CheckLineClassCarrier = verdict.CheckLineClassCarrier
	NoData                = verdict.NoData
	NotApplicable         = verdict.NotApplicable
	CheckMinThroughput    = verdict.CheckMinThroughput
	CheckMaxOversell      = verdict.CheckMaxOversell
	GPUWatchJournal       = verdict.GPUWatchJournal
	GPUQueryLog           = verdict.GPUQueryLog
	RankingRule           = verdict.RankingRule
	MaxHorizonMonths      = verdict.MaxHorizonMonths
)

var (
	NewWindow             = verdict.NewWindow
	CheckSLA              = verdict.CheckSLA
	ThroughputFromResult  = verdict.ThroughputFromResult
	ThroughputFromJournal = verdict.ThroughputFromJournal
	ReplayThroughput      = verdict.ReplayThroughput
	CheckThroughput       = verdict.CheckThroughput
	RelatePort            = verdict.RelatePort
	EvaluateDelivery      = verdict.EvaluateDelivery
	RankLess              = verdict.RankLess
	NewPricing            = verdict.NewPricing
	NewPricingWith        = verdict.NewPricingWith
	TrafficMonth          = verdict.TrafficMonth
	Evaluate              = verdict.Evaluate
	FloorMs               = verdict.FloorMs
	TargetsFromRecords    = verdict.TargetsFromRecords
)
