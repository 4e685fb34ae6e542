import ArgumentParser
import EarshotIO

/// `earshot devices`: the inputs and outputs Earshot can use.
struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List audio input and output devices.")

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

    struct Entry: Codable {
        var index: Int, name: String, hostAPI: String
        var inputChannels: Int, outputChannels: Int, defaultSampleRate: Double
        var isDefaultInput: Bool, isDefaultOutput: Bool
    }

    func run() throws {
        let devices = try AudioDevices.all()
        if format.isJSON {
            try Terminal.printJSON(devices.map {
                Entry(index: $0.index, name: $0.name, hostAPI: $0.hostAPI, inputChannels: $0.inputChannels,
                      outputChannels: $0.outputChannels, defaultSampleRate: $0.defaultSampleRate,
                      isDefaultInput: $0.isDefaultInput, isDefaultOutput: $0.isDefaultOutput)
            })
            return
        }
        guard !devices.isEmpty else {
            print("No audio devices found: no sound card, or no permission to use one. Files and raw PCM (-) still work.")
            return
        }
        for (title, list) in [("Inputs", devices.filter { $0.inputChannels > 0 }), ("Outputs", devices.filter { $0.outputChannels > 0 })] {
            print("\(title):")
            if list.isEmpty { print("  (none)") }
            for d in list {
                let channels = title == "Inputs" ? d.inputChannels : d.outputChannels
                let isDefault = title == "Inputs" ? d.isDefaultInput : d.isDefaultOutput
                print("  [\(d.index)] \(d.name) — \(d.hostAPI), \(channels) ch, \(Int(d.defaultSampleRate)) Hz\(isDefault ? " (default)" : "")")
            }
        }
    }
}
