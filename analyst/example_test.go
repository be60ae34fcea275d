package analyst_test

import (
	"fmt"

	"dialogfarm/analyst"
	"dialogfarm/profiles"
)

func ExampleJSD() {
	target := map[string]float64{"explain": 0.5, "fix": 0.5}
	produced := map[string]float64{"explain": 30, "fix": 10} // counts are normalised
	fmt.Printf("%.4f\n", analyst.JSD(target, produced))
	// Output: 0.0488
}

func ExampleMakePlan() {
	p, err := profiles.Builtin("default")
	if err != nil {
		panic(err)
	}
	pl, err := analyst.MakePlan(p, analyst.PlanConfig{N: 50, Seed: 42})
	if err != nil {
		panic(err)
	}
	fmt.Println(pl.N, pl.Quotas["language"])
	fmt.Println(pl.Check(p))
	// Output:
	// 50 map[go:7 java:9 javascript:9 python:15 typescript:10]
	// <nil>
}
