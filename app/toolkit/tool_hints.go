package toolkit

// ToolHints say what a tool does to the world, for clients that decide what
// to run without asking (MCP's tool annotations): ReadOnly changes nothing;
// otherwise Destructive may undo or end something (else it only adds), and
// Idempotent has no further effect when called again with the same input;
// OpenWorld reaches past this site (the chain, the web, a provider).
type ToolHints struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// toolHints is every tool's hints, in one table so they can be read side by
// side. Register gives each tool its entry; TestEveryToolHasItsHints
// (cmd/petal) fails for a tool registered without one.
var toolHints = map[string]ToolHints{
	// Reading the chain and the web.
	"find_target":   {ReadOnly: true, OpenWorld: true},
	"read_chain":    {ReadOnly: true, OpenWorld: true},
	"read_page":     {ReadOnly: true, OpenWorld: true},
	"search":        {ReadOnly: true, OpenWorld: true},
	"look_up":       {ReadOnly: true, OpenWorld: true},
	"quote_payment": {ReadOnly: true, OpenWorld: true}, // asks NEAR's price and SocialDB's storage, keeps nothing
	// A reading is kept, content-addressed: another read of a live chain may
	// keep another one.
	"get_snapshot": {OpenWorld: true},

	// Reading what this site holds.
	"list_networks":      {ReadOnly: true},
	"get_network":        {ReadOnly: true},
	"describe_snapshot":  {ReadOnly: true},
	"compute_figures":    {ReadOnly: true},
	"compare_figures":    {ReadOnly: true},
	"voting_blocs":       {ReadOnly: true},
	"propose_spec":       {ReadOnly: true},
	"validate_spec":      {ReadOnly: true},
	"render_flower":      {ReadOnly: true},
	"list_explorations":  {ReadOnly: true},
	"get_exploration":    {ReadOnly: true},
	"list_annotations":   {ReadOnly: true},
	"list_layers":        {ReadOnly: true},
	"list_jobs":          {ReadOnly: true},
	"list_flowers":       {ReadOnly: true},
	"get_flower":         {ReadOnly: true},
	"search_petals":      {ReadOnly: true},
	"brain_index":        {ReadOnly: true},
	"brain_route":        {ReadOnly: true},
	"brain_file":         {ReadOnly: true},
	"account_groups":     {ReadOnly: true},
	"shared_accounts":    {ReadOnly: true},
	"related_groups":     {ReadOnly: true},
	"relations_overview": {ReadOnly: true},
	"power_path":         {ReadOnly: true},

	// Writing to explorations: each call adds; a claim already kept is kept
	// once (the annotations), anything else is made anew.
	"start_exploration": {},
	"save_step":         {},
	"add_note":          {},
	"add_annotation":    {Idempotent: true},
	"keep_layer":        {},
	"fork_dataset":      {},

	// Publishing to NEAR from the person's wallet: a new record each time.
	"prepare_publish": {OpenWorld: true},
	"publish_flower":  {OpenWorld: true},
	// Correcting a published flower, as publishing: submitting the same
	// correction again is the same.
	"prepare_correction": {OpenWorld: true},
	"submit_correction":  {Idempotent: true, OpenWorld: true},

	// Jobs: taking and reporting move a job on; stopping and sending one
	// again end its worker's take.
	"take_job":   {},
	"report_job": {},
	"hand_job":   {},
	"stop_job":   {Destructive: true, Idempotent: true},
	"retry_job":  {Destructive: true},
}

// HintsOf is a tool's hints, and whether the table has them.
func HintsOf(name string) (ToolHints, bool) {
	h, ok := toolHints[name]
	return h, ok
}

// HintedTools is every name the table holds.
func HintedTools() []string {
	out := make([]string, 0, len(toolHints))
	for name := range toolHints {
		out = append(out, name)
	}
	return out
}
