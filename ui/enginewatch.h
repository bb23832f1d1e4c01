#pragma once

#include "enginestatus.h"
#include "sandboxbackend.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QTimer>

class SandboxService;

// What the window knows of the engines the sandbox runs on and of their images: a lone engine
// is asked here (the sandbox watches only several), several are read from the sandbox's sites;
// the images are asked of the first engine. AppController polls it and passes on its signals.
class EngineWatch : public QObject
{
    Q_OBJECT
public:
    explicit EngineWatch(SandboxService *sandbox, QObject *parent = nullptr);

    // Every engine the sandbox runs on, in the order given (one, usually).
    QList<EngineStatus> engines() const { return m_engines; }
    // Asks a lone engine now; several are watched by the sandbox itself, and this reads what it
    // knows.
    void refreshEngine();
    // A run started or ended: the running counts change once the sandbox has counted it (the
    // update waits for the event loop, and several in a row make one).
    void runsMoved() { m_engineUpdate.start(); }

    QHash<QString, SandboxBackend::ImageStatus> images() const { return m_images; }
    void refreshImages();
    // The poll's share for images: one on its way is worth a look each time, ready ones only
    // now and then (they are rarely removed).
    void pollImages();
    // What the window shows per language whose image is not ready (none for those that are,
    // nor while the engine does not answer: the status bar says that).
    QHash<QString, QString> imageNotes() const;

Q_SIGNALS:
    // Something the window shows about them changed (state, version, running sandboxes).
    void enginesChanged(const QList<EngineStatus> &engines);
    void imagesChanged();

private:
    // Rebuilds engines() from the sandbox's engines (and the lone engine's last answer).
    void updateEngines();

    SandboxService *m_sandbox;
    EngineStatus m_lone; // the last answer of a lone engine (the sandbox watches only several)
    QList<EngineStatus> m_engines;
    QTimer m_engineUpdate; // coalesces updates after runs start and end
    bool m_asking = false;
    QHash<QString, SandboxBackend::ImageStatus> m_images;
    int m_imagesAsking = 0; // answers still to come
    int m_imagePolls = 0;
};
