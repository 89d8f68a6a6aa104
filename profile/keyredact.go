package profile

// NewRedactor returns a Redactor for keys that no profile names, such as the
// keys a passive recording sees go by: a whole key becomes marker(key), and
// any piece of a secret from FragmentMin characters on becomes Fragment.
func NewRedactor(keys []string, marker func(key string) string) *Redactor {
	return newRedactor(keys, marker)
}
