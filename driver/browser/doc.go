// Package browser owns Chromium: launching Debian's chromium (never a
// downloaded one) with the switches and the isolated environment every
// simulator window needs (Config, Launch), the two libraries that speak
// the DevTools protocol to it behind one small window interface (Page:
// go-rod over a loopback websocket, chromedp over a pipe), and the end of
// Chromium's start-up that webviews wait for (Chromium.WaitStartup).
//
// It knows nothing of code-server, the workbench or a dialogue: a Page
// evaluates scripts, navigates and sends key and mouse events, and what
// those mean is package workbench's. It does not decide how many windows
// a run opens or when one is replaced: that is the simulator slot's
// (package driver).
package browser
