package mcpserver

import "slices"

// registry holds named entries in registration order. Re-registering a
// name replaces the entry in place, so a tool keeps its position in
// tools/list when its definition is updated. The Server's mutex guards it.
type registry[E any] struct {
	names []string
	byKey map[string]E
}

// put adds or replaces the entry under name.
func (r *registry[E]) put(name string, e E) {
	if r.byKey == nil {
		r.byKey = make(map[string]E)
	}
	if _, ok := r.byKey[name]; !ok {
		r.names = append(r.names, name)
	}
	r.byKey[name] = e
}

// remove deletes the entries under names and reports whether any existed.
func (r *registry[E]) remove(names ...string) bool {
	removed := false
	for _, n := range names {
		if _, ok := r.byKey[n]; ok {
			delete(r.byKey, n)
			removed = true
		}
	}
	if removed {
		r.names = slices.DeleteFunc(r.names, func(n string) bool {
			_, ok := r.byKey[n]
			return !ok
		})
	}
	return removed
}

func (r *registry[E]) get(name string) (E, bool) {
	e, ok := r.byKey[name]
	return e, ok
}

// list returns the entries in registration order.
func (r *registry[E]) list() []E {
	out := make([]E, len(r.names))
	for i, n := range r.names {
		out[i] = r.byKey[n]
	}
	return out
}
