package specs

// NamePetals writes a person's own names (account id → name) on the petals
// they name, where the view's labels show names (the spec's labels are
// name and the view's spec). It reports whether any petal took one, which
// makes the picture that person's alone.
func NamePetals(f *Flower, v View, names map[string]string) bool {
	if len(names) == 0 || f.Spec.Labels != LabelsName || v.Labels != ViewLabelsSpec {
		return false
	}
	named := false
	for i := range f.Petals {
		p := &f.Petals[i]
		if name, ok := names[p.Account]; ok && !p.Others && p.Account != "" {
			p.Name, named = name, true
		}
	}
	return named
}
