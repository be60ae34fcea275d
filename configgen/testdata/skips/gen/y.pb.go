package gen

func Y() int {
	return 2
}
