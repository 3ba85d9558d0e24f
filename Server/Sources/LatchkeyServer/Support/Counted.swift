/// `1 device`, `2 devices`, `0 devices`: a count with its noun, singular only for one (console pages, audit details and
/// the CLI's messages say it right).
package func counted(_ number: Int, _ noun: String, plural: String? = nil) -> String {
    "\(number) " + (number == 1 ? noun : plural ?? noun + "s")
}
