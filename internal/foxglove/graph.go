package foxglove

import (
	"slices"
	"sort"
)

func normalizeIDs(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, ids := range m {
		ids = slices.Clone(ids)
		slices.Sort(ids)
		out[k] = slices.Compact(ids)
	}
	return out
}

// SetGraph replaces the connection graph; subscribed clients get what
// changed.
func (s *Server) SetGraph(g Graph) {
	g = Graph{Published: normalizeIDs(g.Published), Subscribed: normalizeIDs(g.Subscribed), Services: normalizeIDs(g.Services)}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.graph
	s.graph = g
	if !s.caps[CapConnectionGraph] {
		return
	}
	upd := graphDiff(old, g)
	if len(upd.PublishedTopics)+len(upd.SubscribedTopics)+len(upd.AdvertisedServices)+
		len(upd.RemovedTopics)+len(upd.RemovedServices) == 0 {
		return
	}
	var msg []byte
	for c := range s.clients {
		if c.graphSub {
			if msg == nil {
				msg = mustJSON(upd)
			}
			c.sendText(msg)
		}
	}
}

// graphDiff lists what changed from old to cur: topics and services whose
// id lists changed or are new, and names that disappeared.
func graphDiff(old, cur Graph) graphUpdateMsg {
	upd := graphUpdateMsg{Op: "connectionGraphUpdate", PublishedTopics: []pubIDs{}, SubscribedTopics: []subIDs{},
		AdvertisedServices: []provIDs{}, RemovedTopics: []string{}, RemovedServices: []string{}}
	for _, name := range sortedKeys(cur.Published) {
		if prev, ok := old.Published[name]; !ok || !slices.Equal(prev, cur.Published[name]) {
			upd.PublishedTopics = append(upd.PublishedTopics, pubIDs{Name: name, PublisherIDs: nonNil(cur.Published[name])})
		}
	}
	for _, name := range sortedKeys(cur.Subscribed) {
		if prev, ok := old.Subscribed[name]; !ok || !slices.Equal(prev, cur.Subscribed[name]) {
			upd.SubscribedTopics = append(upd.SubscribedTopics, subIDs{Name: name, SubscriberIDs: nonNil(cur.Subscribed[name])})
		}
	}
	for _, name := range sortedKeys(cur.Services) {
		if prev, ok := old.Services[name]; !ok || !slices.Equal(prev, cur.Services[name]) {
			upd.AdvertisedServices = append(upd.AdvertisedServices, provIDs{Name: name, ProviderIDs: nonNil(cur.Services[name])})
		}
	}
	// A topic still known on one side but gone from the other gets an
	// empty list there, so the client forgets the stale ids.
	for _, name := range sortedKeys(old.Published) {
		_, pub := cur.Published[name]
		_, sub := cur.Subscribed[name]
		if !pub && sub {
			upd.PublishedTopics = append(upd.PublishedTopics, pubIDs{Name: name, PublisherIDs: []string{}})
		}
	}
	for _, name := range sortedKeys(old.Subscribed) {
		_, pub := cur.Published[name]
		_, sub := cur.Subscribed[name]
		if pub && !sub {
			upd.SubscribedTopics = append(upd.SubscribedTopics, subIDs{Name: name, SubscriberIDs: []string{}})
		}
	}
	gone := map[string]bool{}
	for _, m := range []map[string][]string{old.Published, old.Subscribed} {
		for name := range m {
			_, pub := cur.Published[name]
			_, sub := cur.Subscribed[name]
			if !pub && !sub {
				gone[name] = true
			}
		}
	}
	upd.RemovedTopics = append(upd.RemovedTopics, sortedKeys(gone)...)
	for _, name := range sortedKeys(old.Services) {
		if _, ok := cur.Services[name]; !ok {
			upd.RemovedServices = append(upd.RemovedServices, name)
		}
	}
	return upd
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
