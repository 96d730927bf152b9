#pragma once
// The side panel of a training-graph view (Netron style): the clicked op's type, phase, role,
// status under the scheme (forward / backward / gradient output / pruned), the layer it came
// from, its attributes exactly as TinyEngine's JSON spells them, and its input and output
// tensors (name or producing op, shape, dtype, bytes) with links to producers and consumers.
// Reads any TrainingGraph; the Network is optional (only for layer names).
#include <QTextBrowser>

namespace tinyscope {
struct TrainingGraph;
struct Network;
}

namespace tinyscope::ui {

class NodeInspector : public QTextBrowser {
    Q_OBJECT
public:
    explicit NodeInspector(QWidget* parent = nullptr);

    void showOp(const TrainingGraph& g, int op, const Network* net = nullptr);
    void showHint(const QString& html);
    int op() const { return op_; }

Q_SIGNALS:
    void opLinkActivated(int op);   // a producer/consumer link was clicked

private:
    int op_ = -1;
};

// "nn.mcuconv2d#12" -> 12; -1 when the name is not an op node.
int opIndexOfNodeName(const QString& name);

}  // namespace tinyscope::ui
