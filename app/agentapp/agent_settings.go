package agentapp

import (
	"slices"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// CheckSettings checks a chat's settings against the model catalogue, the
// allow-list (T370): an unknown model is bad_input naming it, and an effort
// goes only where the model (the one picked, else the site's own) offers it.
// nil is no settings.
func (a *AgentService) CheckSettings(s *runs.Settings) error {
	if s == nil {
		return nil
	}
	offers := a.model.Models()
	model := s.Model
	if model == "" {
		model = a.model.Name()
	}
	i := slices.IndexFunc(offers, func(o ports.ModelOffer) bool { return o.ID == model })
	if i < 0 {
		if s.Model == "" {
			// The site's own model is always offered; a catalogue without
			// it is a wiring mistake, not the caller's.
			return errs.Newf(errs.Internal, "this site's model %s is not in its catalogue", model)
		}
		return errs.Newf(errs.BadInput, "settings.model: model %q is not offered here", s.Model).
			WithHint("pick one of: " + strings.Join(modelIDs(offers), ", ") + "; or leave it out for this site's own")
	}
	if s.Effort == "" {
		return nil
	}
	efforts := offers[i].Efforts
	switch {
	case len(efforts) == 0:
		return errs.Newf(errs.BadInput, "settings.effort: model %s takes no effort", model).
			WithHint("leave effort out, or pick a model that offers it")
	case !slices.Contains(efforts, s.Effort):
		return errs.Newf(errs.BadInput, "settings.effort: %q is not an effort model %s offers", s.Effort, model).
			WithHint("pick one of: " + strings.Join(efforts, ", "))
	}
	return nil
}

// Models is the catalogue a chat may pick from, with each model's efforts.
func (a *AgentService) Models() []ports.ModelOffer { return a.model.Models() }

func modelIDs(offers []ports.ModelOffer) []string {
	ids := make([]string, len(offers))
	for i, o := range offers {
		ids[i] = o.ID
	}
	return ids
}
