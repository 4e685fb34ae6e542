/// Whether an alert is sounding, shared by the stage that hears it (the detector) and the
/// stages that must let it through (the separator inside the noise suppressor).
///
/// Both run on the same audio thread, one after the other in a chain, so a plain value does.
public final class AlertGate: @unchecked Sendable {
    /// True while the detector hears an alert (announced, or about to be).
    public var isOpen = false

    public init() {}
}
