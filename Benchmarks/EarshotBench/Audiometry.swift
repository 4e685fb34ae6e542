import EarshotAudiometry
import EarshotCore
import Foundation

/// Every procedure on the same simulated population: accuracy, effort and how well
/// unreliable listeners are caught.
func audiometryReport(listenersPerProfile: Int = 40) throws {
    let transducer = Transducer.supraAural
    let frequencies = AudiometricFrequencies.standard
    let calibration = try Calibration(profile: .nominal(transducer: transducer))
    let plan = try TestPlan(frequencies: frequencies, calibration: calibration)
    print("\nHearing test on \(listenersPerProfile) simulated listeners per profile (\(ListenerProfile.allCases.map(\.rawValue).joined(separator: ", "))), \(transducer.rawValue) earphones, \(frequencies.count) frequencies × 2 ears\n")
    print("procedure          MAE dB  ±5 dB  ±10 dB  tones/test  catch/test  flagged noisy  flagged reliable  no-response")
    var hughsonWestlakeTones = 0.0
    for kind in ProcedureKind.allCases {
        var errors: [Double] = [], tones = 0, catches = 0, tests = 0
        var noisy = 0, noisyFlagged = 0, reliable = 0, reliableFlagged = 0, missing = 0
        for (p, profile) in ListenerProfile.allCases.enumerated() {
            for n in 0..<listenersPerProfile {
                let seed = UInt64(p * 10_000 + n)
                var listener = profile.make(seed: seed, frequencies: frequencies, interauralAttenuationDB: transducer.interauralAttenuationDB)
                let result = try simulateTest(procedure: kind, listener: &listener, plan: plan, transducer: transducer, seed: seed)
                tests += 1
                tones += result.presentations
                catches += result.reliability.catchTrials
                if profile == .noisyResponder {
                    noisy += 1
                    if !result.reliability.isReliable { noisyFlagged += 1 }
                } else {
                    reliable += 1
                    if !result.reliability.isReliable { reliableFlagged += 1 }
                }
                for threshold in result.thresholds {
                    guard let found = threshold.thresholdDBHL else { missing += 1; continue }
                    errors.append(abs(found - listener.threshold(threshold.ear, threshold.frequencyHz)))
                }
            }
        }
        let mae = errors.reduce(0, +) / Double(errors.count)
        let within5 = Double(errors.filter { $0 <= 5 }.count) / Double(errors.count)
        let within10 = Double(errors.filter { $0 <= 10 }.count) / Double(errors.count)
        let perTest = Double(tones) / Double(tests)
        if kind == .hughsonWestlake { hughsonWestlakeTones = perTest }
        let relative = kind == .hughsonWestlake ? "" : String(format: " (%.0f %% of HW)", 100 * perTest / hughsonWestlakeTones)
        print(kind.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0)
              + String(format: "%6.2f  %5.1f%%  %5.1f%%  %10.1f  %10.1f  %8.0f %%      %8.0f %%        %d", mae, 100 * within5, 100 * within10,
                       perTest, Double(catches) / Double(tests), 100 * Double(noisyFlagged) / Double(noisy),
                       100 * Double(reliableFlagged) / Double(reliable), missing) + relative)
    }
}
