import ArgumentParser
import EarshotEnhance

extension NoiseSuppressor.Model: ExpressibleByArgument {}

/// The noise suppressor's `--model` and `--strength`, shared by `enhance` and `listen`.
struct SuppressorOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Where the gains come from: learned (a recurrent network) or classic (statistical).", valueName: "model"))
    var model: NoiseSuppressor.Model = .learned

    @Option(help: "The most any frequency is attenuated, in dB (0–40).")
    var strength: Double = NoiseSuppressor.defaultStrengthDB

    func validate() throws {
        guard strength.isFinite, (0...40).contains(strength) else {
            throw ValidationError("--strength is the most noise is reduced, 0–40 dB, not \(String(format: "%g", strength))")
        }
    }
}
