package sandbox

import "os/exec"

func runHost(code string) (string, error) {
	out, err := exec.Command("/usr/bin/python3", "-c", code).CombinedOutput()
	return string(out), err
}
