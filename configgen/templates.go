package configgen

import (
	"dialogfarm/configgen/coherence"
	"dialogfarm/dialog/vocab"
)

// localeText is the template fallback's paraphrase bank for one locale:
// several wordings of each request, drawn at random, so that template
// queries vary as developers' do. Placeholders: {ref} the code referred
// to, {sym} the function's name, {file} the open file, {other} the file
// pasted code comes from, {lang} the language's name, {topic} and {task}
// a language feature and a task the code in view shows.
type localeText struct {
	// terse and normal map an intent to wordings of a query about {ref}.
	terse, normal map[string][]string
	// general maps an intent to wordings of a query about no code in
	// particular; a wording with {topic} or {task} is used only when the
	// code in view shows one (see grounding.go).
	general map[string][]string
	// ref maps a reference region to ways of saying {ref}: selection,
	// function (with {sym}), unnamed_function (the name is not in view),
	// current_file and open_files (the open file; the other one is only
	// ever named with a pasted excerpt of it).
	ref map[string][]string
	// verbose maps a difficulty to the background a verbose query adds;
	// hardHint is added to normal queries of hard difficulty.
	verbose  map[string][]string
	hardHint []string
	// paste maps a kind of pasted code (paste* constants) to the sentence
	// that introduces it.
	paste map[string][]string
	// followUps maps a follow-up kind to its wordings.
	followUps map[string][]followUpText
}

// followUpText is one wording of a follow-up and what it presupposes of
// the answer before it.
type followUpText struct {
	text  string
	needs coherence.Needs
}

// Ref keys beyond the reference values.
const (
	refFunction        = "function"
	refUnnamedFunction = "unnamed_function"
)

func texts() map[string]localeText {
	out := map[string]localeText{"en": english(), "zh": chinese()}
	for loc, t := range europeanTexts() {
		out[loc] = t
	}
	for loc, t := range asianTexts() {
		out[loc] = t
	}
	return out
}

// byIntent maps the intents, in vocab order, to their wordings.
func byIntent(v ...[]string) map[string][]string {
	intents := vocab.Values(vocab.DimIntent)
	out := make(map[string][]string, len(intents))
	for i, intent := range intents {
		out[intent] = v[i]
	}
	return out
}

// l is a list of wordings.
func l(v ...string) []string { return v }

func refs(selection, function, unnamed, file, open []string) map[string][]string {
	return map[string][]string{vocab.RefSelection: selection, refFunction: function, refUnnamedFunction: unnamed,
		vocab.RefCurrentFile: file, vocab.RefOpenFiles: open}
}

func diffs(easy, medium, hard []string) map[string][]string {
	return map[string][]string{"easy": easy, "medium": medium, "hard": hard}
}

func pastes(otherFile, callSite, sameFile, related []string) map[string][]string {
	return map[string][]string{pasteOtherFile: otherFile, pasteCallSite: callSite, pasteSameFile: sameFile, pasteRelated: related}
}

// FollowUpKinds lists the follow-up kinds a policy may name.
func FollowUpKinds() []string {
	return []string{"clarify", "request_change", "ask_tests", "ask_example", "edge_cases", "simplify", "explain_more"}
}

// plain is a wording that presupposes nothing; withCode one that refers
// to code in the answer; afterChange one that compares the answer with
// the code it changed.
func plain(s string) followUpText { return followUpText{text: s} }
func withCode(s string) followUpText {
	return followUpText{text: s, needs: coherence.Needs{AnswerCode: true}}
}
func afterChange(s string) followUpText {
	return followUpText{text: s, needs: coherence.Needs{AnswerCode: true, Change: true}}
}

func kinds(v ...[]followUpText) map[string][]followUpText {
	out := map[string][]followUpText{}
	for i, k := range FollowUpKinds() {
		out[k] = v[i]
	}
	return out
}

func f(v ...followUpText) []followUpText { return v }

func english() localeText {
	return localeText{
		terse: byIntent(
			l("what does {ref} do?", "explain {ref}", "what is {ref} doing", "how does {ref} work?", "{ref} - what does it do"),
			l("write a {lang} helper that goes with {ref}", "add a batch version of {ref}", "need a variant of {ref} that takes a list"),
			l("fix {ref}", "{ref} is broken, fix pls", "bug in {ref}?", "why does {ref} fail sometimes"),
			l("tests for {ref}", "write unit tests for {ref}", "add tests for {ref} pls"),
			l("document {ref}", "add comments to {ref}", "docstring for {ref}"),
			l("make {ref} faster", "speed up {ref}", "optimize {ref}"),
			l("refactor {ref}", "clean up {ref}", "simplify {ref}"),
			l("is {ref} idiomatic {lang}?", "is {ref} ok?", "thoughts on {ref}?")),
		normal: byIntent(
			l("Can you explain what {ref} does and why it is written this way?", "What is {ref} doing here? I don't get the logic.",
				"Could you walk me through {ref} step by step?", "I'm trying to understand {ref}. What does it return, and when?"),
			l("Please write a new function that complements {ref}, handling a list of inputs instead of a single one.",
				"Can you write a function next to {ref} that does the same for a batch of inputs?",
				"I need a second version of {ref} that returns a result object instead of a bare value. Can you write it?"),
			l("There's a bug somewhere in {ref}; it returns the wrong result for some inputs. Can you find and fix it?",
				"{ref} gives me wrong results on some inputs, can you spot the bug?",
				"Something's off in {ref}, it breaks on edge cases. What's wrong and how do I fix it?"),
			l("Write unit tests for {ref}, covering the normal case and the edge cases.",
				"Can you write some tests for {ref}? Make sure the edge cases are covered.",
				"I need unit tests for {ref} before I change it. Can you write them?"),
			l("Add clear doc comments to {ref} explaining the parameters and the return value.",
				"Can you document {ref}? Say what it expects and what it returns.",
				"Please add comments to {ref} so the next person understands it."),
			l("How can I make {ref} faster or use less memory without changing what it returns?",
				"{ref} is slow on big inputs. Can you optimize it?", "Is there a more efficient way to write {ref}?"),
			l("Refactor {ref} to be easier to read, without changing its behaviour.",
				"Can you clean up {ref}? It works but it's hard to read.", "How would you restructure {ref} to make it more maintainable?"),
			l("Is {ref} written the idiomatic {lang} way, or would an experienced developer do it differently?",
				"Is there anything wrong with how {ref} is written?", "Would you write {ref} differently in modern {lang}?")),
		general: byIntent(
			l("Can you explain {topic} in {lang}?", "quick question about {topic} in {lang}", "What's the most common mistake people make in {lang}?"),
			l("Write a {lang} function that {task}.", "need a {lang} snippet that {task}", "Show me a small {lang} program that reads its input from stdin."),
			l("My {lang} code that {task} keeps failing. What are the usual causes?", "What are the most common causes of runtime errors in {lang}?"),
			l("How do I write good unit tests in {lang} for code that {task}?", "What's the usual way to write unit tests in {lang}?"),
			l("What is the standard way to write doc comments in {lang}?", "how should I document a {lang} module?"),
			l("What is the most efficient way in {lang} to write code that {task}?", "How do I profile {lang} code to find what's slow?"),
			l("How should I structure {lang} code that {task} so it stays maintainable?", "What are good ways to keep {lang} code readable as it grows?"),
			l("When should I use {topic} in {lang}?", "what style guide do most {lang} teams follow?")),
		ref: refs(l("this code", "this", "the selected code", "this snippet"),
			l("`{sym}`", "the `{sym}` function", "{sym}"),
			l("this function", "the function I'm in"),
			l("{file}", "this file", "the whole file"),
			l("{file}", "this file")),
		verbose: diffs(
			l("I'm fairly new to {lang}, so please keep it simple and show the final code in full.",
				"I only started with {lang} last month, so a simple answer with the complete code would help a lot."),
			l("I'm working in {file} and want to understand the trade-offs, so please explain your reasoning step by step before the final code.",
				"Some context: this is part of {file}, which a few other modules depend on, so I'd like to know what could break before I change anything."),
			l("This runs in production under heavy load, so think about edge cases, error handling, performance and concurrency, and point out anything risky.",
				"It's on a hot path in production and we've had incidents around it before, so please be careful with edge cases and concurrency and call out anything risky.")),
		hardHint: l("Please consider edge cases and performance.", "Keep edge cases and performance in mind."),
		paste: pastes(l("It works together with this code from {other}:", "This is the part of {other} it talks to:"),
			l("It's called like this in {other}:", "Here's where it's used, in {other}:"),
			l("Related code from {file}:", "For context, this is also in {file}:"),
			l("Similar code from {other}:", "For reference, {other} has:")),
		followUps: kinds(
			f(plain("I don't quite follow. Can you explain that part again more simply?"), plain("wait, what do you mean by that?")),
			f(plain("Can you change it so it also handles empty input?"), withCode("Can you change your version so it also handles empty input?")),
			f(plain("How would I test this?"), withCode("Can you also write tests for your version?")),
			f(plain("Can you show a small usage example?"), plain("example of how to call it?")),
			f(plain("What happens with empty or very large inputs?"), plain("what about edge cases like nil or empty input?")),
			f(plain("Can you put that more simply?"), withCode("Can you make your code shorter and simpler?")),
			f(plain("Can you go into more detail on why that works?"), afterChange("Why is that better than the original?"))),
	}
}

func chinese() localeText {
	return localeText{
		terse: byIntent(
			l("{ref}是干什么的？", "解释一下{ref}", "{ref}啥意思", "{ref}在做什么"),
			l("写一个配合{ref}用的 {lang} 辅助函数", "给{ref}加个批量版本", "写个{ref}的变体，参数改成列表"),
			l("修一下{ref}", "{ref}有 bug，帮忙修下", "{ref}为什么报错"),
			l("给{ref}写测试", "{ref}的单元测试", "帮{ref}补几个测试"),
			l("给{ref}加注释", "给{ref}写文档注释"),
			l("让{ref}更快", "优化一下{ref}", "{ref}太慢了"),
			l("重构{ref}", "简化一下{ref}", "整理下{ref}"),
			l("{ref}符合 {lang} 的习惯写法吗？", "{ref}这样写行吗", "{ref}写得怎么样")),
		normal: byIntent(
			l("能解释一下{ref}是做什么的吗？为什么要这样写？", "{ref}的逻辑没看懂，能一步步讲一下吗？", "{ref}返回的是什么？什么情况下会返回空？"),
			l("请写一个新函数配合{ref}使用，处理一组输入而不是单个输入。", "能不能参照{ref}再写一个批量处理的版本？"),
			l("{ref}里有个 bug，有些输入会返回错误的结果，能帮我找出来并修复吗？", "{ref}遇到边界输入就出错，哪里有问题？怎么改？"),
			l("请为{ref}编写单元测试，覆盖正常情况和边界情况。", "改{ref}之前想先补测试，能帮我写一下吗？"),
			l("请给{ref}加上清晰的文档注释，说明参数和返回值。", "帮{ref}加点注释吧，让后面的人能看懂。"),
			l("怎样在不改变返回结果的前提下让{ref}更快或更省内存？", "{ref}处理大数据时很慢，能优化一下吗？"),
			l("请重构{ref}，让它更易读，但不要改变行为。", "{ref}能跑但是太乱了，能帮忙整理一下吗？"),
			l("{ref}的写法符合 {lang} 的习惯吗？有经验的开发者会怎么写？", "{ref}这样写有没有什么问题？")),
		general: byIntent(
			l("{lang} 里的 {topic} 是怎么工作的？", "能讲讲 {lang} 的 {topic} 吗", "{lang} 新手最容易犯的错误是什么？"),
			l("用 {lang} 写一个函数，{task}。", "{lang} 怎么写一个{task}的函数", "写一个从标准输入读数据的 {lang} 小程序"),
			l("我的 {lang} 代码（{task}）一直报错，常见原因有哪些？", "{lang} 运行时报错最常见的原因有哪些？"),
			l("在 {lang} 里怎么给这类代码写好单元测试：{task}？", "{lang} 一般怎么写单元测试？"),
			l("{lang} 里写文档注释的标准方式是什么？", "{lang} 模块应该怎么写文档？"),
			l("在 {lang} 里实现“{task}”最高效的写法是什么？", "怎么分析 {lang} 代码的性能瓶颈？"),
			l("{lang} 里“{task}”这样的代码应该怎么组织才好维护？", "{lang} 项目变大以后怎么保持代码可读？"),
			l("{lang} 里什么时候应该用 {topic}？", "{lang} 团队一般用什么代码规范？")),
		ref: refs(l("这段代码", "这个", "选中的代码"),
			l("`{sym}`", "{sym} 函数", "`{sym}` 这个函数"),
			l("这个函数", "光标所在的函数"),
			l("{file} 这个文件", "这个文件", "整个文件"),
			l("{file} 这个文件", "这个文件")),
		verbose: diffs(
			l("我刚开始学 {lang}，请讲得简单一点，并给出完整的最终代码。", "我 {lang} 不太熟，麻烦讲简单点，最后给个完整代码。"),
			l("我在改 {file}，想了解其中的取舍，请先一步步说明思路，再给出最终代码。", "背景：这是 {file} 里的代码，别的模块也在用，想先搞清楚改了会影响什么。"),
			l("这段代码在生产环境高负载下运行，请考虑边界情况、错误处理、性能和并发，并指出有风险的地方。", "这是线上的热点路径，之前出过事故，请注意边界情况和并发问题，有风险的地方都指出来。")),
		hardHint: l("请考虑边界情况和性能。", "注意边界情况和性能。"),
		paste: pastes(l("它和 {other} 里的这段代码一起用：", "{other} 里相关的部分是这样的："),
			l("{other} 里是这样调用它的：", "调用的地方在 {other}："),
			l("{file} 里相关的代码：", "{file} 里还有这段："),
			l("{other} 里有段类似的代码：", "参考一下 {other} 里的：")),
		followUps: kinds(
			f(plain("没太看懂，能再简单解释一下那部分吗？"), plain("这句是什么意思？")),
			f(plain("能改一下，让它也能处理空输入吗？"), withCode("能把你的代码改一下，让它也能处理空输入吗？")),
			f(plain("这个要怎么测试？"), withCode("能顺便给你的代码写一下测试吗？")),
			f(plain("能给个简单的使用示例吗？"), plain("怎么调用？给个例子")),
			f(plain("输入为空或者特别大的时候会怎样？"), plain("边界情况呢，比如空输入？")),
			f(plain("能说得再简单一点吗？"), withCode("你的代码能写得更短更简单一点吗？")),
			f(plain("能再详细讲讲为什么这样可行吗？"), afterChange("为什么这样比原来的好？"))),
	}
}
