package affinity

// QoSClass is a darwin quality-of-service class: the scheduler's lever on
// Apple silicon, where it decides between performance and efficiency
// cores (and clock) by class rather than by CPU. The values are darwin's
// qos_class_t.
type QoSClass uint32

const (
	QoSUserInteractive QoSClass = 0x21 // work the user is waiting on right now
	QoSUserInitiated   QoSClass = 0x19 // work the user asked for and awaits
	QoSDefault         QoSClass = 0x15
	QoSUtility         QoSClass = 0x11 // long work the user is not watching
	QoSBackground      QoSClass = 0x09 // deferrable work; may run only on efficiency cores
)
