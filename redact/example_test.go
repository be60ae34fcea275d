package redact_test

import (
	"fmt"

	"dialogfarm/redact"
)

func ExampleRedactor() {
	d, err := redact.NewDetector()
	if err != nil {
		panic(err)
	}
	r := redact.NewRedactor(d)
	src := `db = connect("postgres://app:q7Rk2Vx9LwT3@db:5432/app")` + "\n" +
		`headers = {"Authorization": "Bearer Zq8Xr2Lm4Np6Tv1Wy3Ks"}` + "\n"
	out, n := r.Redact(src)
	fmt.Print(out)
	// The same secret elsewhere gets the same placeholder.
	q, _ := r.Redact("why is q7Rk2Vx9LwT3 refused?")
	fmt.Println(q)
	fmt.Println(n, r.Stats().Summary())
	// Output:
	// db = connect("postgres://app:REDACTED_DSN_PASSWORD_1@db:5432/app")
	// headers = {"Authorization": "Bearer REDACTED_BEARER_TOKEN_1"}
	// why is REDACTED_DSN_PASSWORD_1 refused?
	// 2 2 secrets (3 places): bearer-token 1, dsn-password 1
}
