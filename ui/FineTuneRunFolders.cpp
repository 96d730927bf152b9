#include "FineTuneRunFolders.h"

#include "workspace/CalibrationData.h"

#include <QCryptographicHash>
#include <QRegularExpression>

namespace tinyscope::ui {

namespace {

// 12 hex digits of SHA-256 over `id`.
QString shortHash(const Json& id)
{
    return QString::fromLatin1(QCryptographicHash::hash(QByteArray::fromStdString(id.dump()), QCryptographicHash::Sha256).toHex().left(12));
}

QString fileSafe(QString s) { return s.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]")), QStringLiteral("_")); }

// The calibration data by its name: "" (the model's own) is resolved, so a run made when the
// default was written out ("fashion-mnist:holdout") keeps its folder and resumes.
std::string calibrationName(const FineTuneRequest& rq)
{
    if (!rq.quantize.calib_data.empty()) return rq.quantize.calib_data;
    if (const SubnetSource* s = rq.model.asSubnet()) return ownCalibrationData(s->space);
    return kZooCalibrationData;
}

// What a run's figures depend on besides the scheme: the model (and the subnet's quantization),
// the data, the recipe without `threads` (the core's checkpoint fingerprint, plus quantization).
Json runIdentity(const FineTuneRequest& rq)
{
    Json recipe = rq.recipe.toJson();
    recipe.erase("threads");
    return Json{{"model", rq.model.describe()},
                {"data", rq.data},
                {"recipe", recipe},
                {"quantize", {calibrationName(rq), rq.quantize.calib_images, rq.quantize.bn_images}}};
}

}  // namespace

QString fineTuneRunFolder(const QString& root, const QString& model, const FineTuneRequest& rq)
{
    Json id = runIdentity(rq);
    id["scheme"] = rq.scheme.toJson().dump(2) + "\n";   // scheme.json's text
    return QStringLiteral("%1/%2-%3-%4").arg(root, fileSafe(model), rq.recipe.qas ? QStringLiteral("qas") : QStringLiteral("noqas"), shortHash(id));
}

QString contributionFolder(const QString& root, const QString& model, const ContributionOptions& o)
{
    Json id = runIdentity(o.base);
    id["analysis"] = Json{{"tails", o.tails}, {"window", o.window}, {"ratios", o.ratios}};
    return QStringLiteral("%1/contributions/%2-%3").arg(root, fileSafe(model), shortHash(id));
}

}  // namespace tinyscope::ui
